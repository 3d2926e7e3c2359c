import { isIP } from 'node:net';
import { z } from 'zod';
import { int } from '../env-rules.js';

/** An authserv-id as receiving providers write it: a host name (RFC 8601 allows any token; these are what is seen). */
const AUTHSERV_ID = /^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$/;

/** A DNS server as node's resolver takes it: an IP address, `ipv4:port` or `[ipv6]:port`. */
const isDnsServer = (s: string): boolean => {
  const m = /^\[([^\]]+)\]:(\d{1,5})$/.exec(s) ?? /^([^:]+):(\d{1,5})$/.exec(s);
  const [host, port] = m ? [m[1]!, Number(m[2])] : [s, 53];
  return isIP(host) !== 0 && port > 0 && port < 65536;
};

const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** What received mail must show before it may opt a lead out, bounce it or block its address. */
export const inboundAuthEnv = {
  // The authserv-ids (comma list) of the receiving provider whose Authentication-Results header is believed.
  INBOUND_TRUSTED_AUTHSERV_IDS: z
    .string()
    .optional()
    .transform(list)
    .refine((ids) => ids.every((id) => AUTHSERV_ID.test(id)), 'must be a comma-separated list of host names such as mx.google.com'),
  // Our own DKIM/SPF/DMARC check of mail received over SMTP: all its DNS lookups together get this long.
  INBOUND_AUTH_DNS_TIMEOUT_MS: int(5000, 100),
  // The DNS servers (comma list, `ip` or `ip:port`) that check asks; empty: the system's (/etc/resolv.conf).
  INBOUND_AUTH_DNS_SERVERS: z
    .string()
    .optional()
    .transform(list)
    .refine((s) => s.every(isDnsServer), 'must be a comma-separated list of IP addresses, each with an optional :port'),
} satisfies z.ZodRawShape;

export function inboundAuthConfig(env: z.output<z.ZodObject<typeof inboundAuthEnv>>) {
  return {
    /**
     * Lowercased. Empty (the default): no Authentication-Results header is believed, so mail without our
     * token or one of our Message-IDs never changes a lead, stops a sequence or blocks an address.
     */
    trustedAuthservIds: env.INBOUND_TRUSTED_AUTHSERV_IDS.map((id) => id.toLowerCase()),
    /**
     * Mail received over our own SMTP listener and matched by its sender only is checked here (DKIM, SPF,
     * DMARC with mailauth): every DNS lookup of one check together gets `dnsTimeoutMs`; past it the check
     * is a temporary error and proves nothing (src/inbound/smtp-auth.ts).
     */
    dnsTimeoutMs: env.INBOUND_AUTH_DNS_TIMEOUT_MS,
    dnsServers: env.INBOUND_AUTH_DNS_SERVERS,
  };
}
