import { z } from 'zod';

/** An authserv-id as receiving providers write it: a host name (RFC 8601 allows any token; these are what is seen). */
const AUTHSERV_ID = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** What received mail must show before it may opt a lead out, bounce it or block its address. */
export const inboundAuthEnv = {
  // The authserv-ids (comma list) of the receiving provider whose Authentication-Results header is believed.
  INBOUND_TRUSTED_AUTHSERV_IDS: z
    .string()
    .optional()
    .transform((s) =>
      (s ?? '')
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    )
    .refine((ids) => ids.every((id) => AUTHSERV_ID.test(id)), 'must be a comma-separated list of host names such as mx.google.com'),
} satisfies z.ZodRawShape;

export function inboundAuthConfig(env: z.output<z.ZodObject<typeof inboundAuthEnv>>) {
  return {
    /**
     * Lowercased. Empty (the default): no Authentication-Results header is believed, so mail without our
     * token or one of our Message-IDs never changes a lead, stops a sequence or blocks an address.
     */
    trustedAuthservIds: env.INBOUND_TRUSTED_AUTHSERV_IDS.map((id) => id.toLowerCase()),
  };
}
