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
  INBOUND_TLS_CERT_FILE: z.string().min(1).optional(),
  INBOUND_TLS_KEY_FILE: z.string().min(1).optional(),
} satisfies z.ZodRawShape;

/** The domain of `Name <a@b>` or `a@b` when it is a dotted name other than localhost; else null. */
function fromDomain(from: string): string | null {
  const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
  const domain = address
    .slice(address.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
  return domain.includes('.') && !domain.endsWith('localhost') && EHLO_NAME.test(domain) ? domain : null;
}

export function mailTransportConfig(env: z.output<z.ZodObject<typeof mailTransportEnv>> & { MAIL_FROM: string }) {
  const cert = env.INBOUND_TLS_CERT_FILE ?? null;
  const key = env.INBOUND_TLS_KEY_FILE ?? null;
  return {
    /**
     * The name the SMTP transport gives in EHLO: MAIL_EHLO_NAME, else MAIL_FROM's domain, else null
     * (nodemailer's own: the machine's host name when it has a dot, else [127.0.0.1]).
     */
    ehloName: env.MAIL_EHLO_NAME ?? fromDomain(env.MAIL_FROM),
    /** The SMTP transport refuses to send unless the server offers STARTTLS (or SMTP_SECURE is on). */
    requireTls: env.SMTP_REQUIRE_TLS,
    /**
     * The inbound listener offers STARTTLS with this certificate and key (PEM files, read when it starts;
     * it refuses to start with only one of them); null: no STARTTLS.
     */
    inboundTls: cert || key ? { certFile: cert, keyFile: key } : null,
  };
}
