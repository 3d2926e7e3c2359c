import { z } from 'zod';
import { int } from '../env-rules.js';

/** Settings of the inbound mail door (the SMTP listener and the inbound URL). */
export const inboundEnv = {
  INBOUND_SMTP_PORT: int(2525, 0),
  INBOUND_SMTP_HOST: z.string().min(1).optional(),
  INBOUND_MAIL_DOMAIN: z
    .string()
    .regex(/^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$/, 'must be a domain name such as mail.example.com')
    .optional(),
  INBOUND_MAX_BYTES: int(25 * 1024 * 1024),
  INBOUND_MAIL_CONCURRENCY: int(64),
} satisfies z.ZodRawShape;

export function inboundConfig(env: z.output<z.ZodObject<typeof inboundEnv>>) {
  return {
    /** 0: no SMTP listener (mail may still arrive on an account's inbound URL). */
    smtpPort: env.INBOUND_SMTP_PORT,
    smtpHost: env.INBOUND_SMTP_HOST ?? '0.0.0.0',
    /** Reply-To and the List-Unsubscribe mailto use it; the listener accepts mail for it only. */
    domain: (env.INBOUND_MAIL_DOMAIN ?? 'localhost').toLowerCase(),
    /** Bigger messages are refused (SMTP 552, HTTP 413) before anything is stored. */
    maxBytes: env.INBOUND_MAX_BYTES,
    /** `inbound-mail` jobs (parse and apply) one worker process runs at once. */
    concurrency: env.INBOUND_MAIL_CONCURRENCY,
  };
}
