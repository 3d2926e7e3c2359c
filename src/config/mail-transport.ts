import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { z } from 'zod';

/** A host name (letters, digits, dots, hyphens) or an address literal such as [192.0.2.1]. */
const EHLO_NAME = /^(?:[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])$/;

/** Settings of the mail transports' own hygiene: the EHLO name, TLS out, STARTTLS in. */
export const mailTransportEnv = {
  MAIL_EHLO_NAME: z
    .string()
    .regex(EHLO_NAME, 'must be a host name such as mail.example.com or an address literal such as [192.0.2.1]')
    .optional(),
  SMTP_REQUIRE_TLS: z
    .enum(['true', 'false'])
    .optional()
    .transform((v) => v === 'true'),
  /** A PEM file of CA certificates trusted for the relay's TLS besides Node's own, read once at start. */
  SMTP_TLS_CA_FILE: z
    .string()
    .min(1)
    .optional()
    .transform((file, ctx) => {
      if (!file) return null;
      try {
        const pem = readFileSync(file, 'utf8');
        if (pem.includes('-----BEGIN CERTIFICATE-----')) return pem;
        ctx.addIssue({ code: 'custom', message: `must name a PEM file of CA certificates (${file} holds none)` });
      } catch (err) {
        ctx.addIssue({
          code: 'custom',
          message: `must name a readable PEM file (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}: ${file})`,
        });
      }
      return z.NEVER;
    }),
  INBOUND_TLS_CERT_FILE: z.string().min(1).optional(),
  INBOUND_TLS_KEY_FILE: z.string().min(1).optional(),
} satisfies z.ZodRawShape;

/**
 * The EHLO name when MAIL_EHLO_NAME is unset: the machine's host name when it is a fully qualified name
 * (dotted, not localhost or localhost.localdomain), else null (nodemailer's own: the address literal [127.0.0.1]). EHLO names the
 * sending host, never the From domain: a domain that is not this host's name fails receivers' HELO checks.
 */
export function defaultEhloName(host: string): string | null {
  const name = host.trim().toLowerCase().replace(/\.$/, '');
  const local = name.startsWith('localhost.') || name.endsWith('.localhost') || name.endsWith('.localdomain');
  return name.includes('.') && !local && EHLO_NAME.test(name) ? name : null;
}

export function mailTransportConfig(env: z.output<z.ZodObject<typeof mailTransportEnv>>, host = hostname()) {
  const cert = env.INBOUND_TLS_CERT_FILE ?? null;
  const key = env.INBOUND_TLS_KEY_FILE ?? null;
  return {
    /** The name the SMTP transport gives in EHLO: MAIL_EHLO_NAME, else the machine's FQDN (defaultEhloName). */
    ehloName: env.MAIL_EHLO_NAME ?? defaultEhloName(host),
    /** PEM CA certificates trusted for the relay's TLS besides Node's store (SMTP_TLS_CA_FILE); null: Node's only. */
    tlsCa: env.SMTP_TLS_CA_FILE ?? null,
    /** The SMTP transport refuses to send unless the server offers STARTTLS (or SMTP_SECURE is on). */
    requireTls: env.SMTP_REQUIRE_TLS,
    /**
     * The inbound listener offers STARTTLS with this certificate and key (PEM files, read when it starts;
     * it refuses to start with only one of them); null: no STARTTLS.
     */
    inboundTls: cert || key ? { certFile: cert, keyFile: key } : null,
  };
}
