import { z } from 'zod';

const DOMAIN = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/** Who mail is sent as: the domains an account's own sending identity may use. */
export const mailIdentityEnv = {
  MAIL_ALLOWED_FROM_DOMAINS: z
    .string()
    .optional()
    .transform((v) => (v === undefined ? null : v.split(',').map((d) => d.trim().toLowerCase())))
    .refine((list) => list === null || (list.length > 0 && list.every((d) => DOMAIN.test(d))), {
      message: 'must be a comma-separated list of domain names such as example.com,mail.example.com',
    }),
} satisfies z.ZodRawShape;

/** The bare, lowercased address of `Name <a@b>` or `a@b`. */
const bareOf = (address: string) => (/<([^>]+)>/.exec(address)?.[1] ?? address).trim().toLowerCase();

/** The domain of an address, lowercased ('' when it has none). */
export const fromDomain = (address: string) => {
  const bare = bareOf(address);
  const at = bare.lastIndexOf('@');
  return at < 0 ? '' : bare.slice(at + 1);
};

export function mailIdentityConfig(env: z.output<z.ZodObject<typeof mailIdentityEnv>> & { MAIL_FROM: string }) {
  return {
    /**
     * Domains `mail sender set` may give an account's From (exact names, no subdomains); unset: the domain
     * of MAIL_FROM alone, so an account sends as no domain the operator has not set up.
     */
    allowedFromDomains: env.MAIL_ALLOWED_FROM_DOMAINS ?? [fromDomain(env.MAIL_FROM)].filter(Boolean),
  };
}

/** A domain no mailbox provider accepts mail from (RFC 6761: `localhost` and every name under it). */
const isLocalhost = (domain: string) => domain === 'localhost' || domain.endsWith('.localhost');

/**
 * Why the configured sender cannot send for real, or null. With MAIL_TRANSPORT=smtp the mail leaves this
 * machine: a From at `localhost` (MAIL_FROM's default, so also an unset MAIL_FROM) or with no domain is
 * dropped or refused by every provider, and its bounces come back nowhere. Checked at start-up; the
 * `local` and `http` transports keep the default so `npm start` works on a laptop.
 */
export function mailIdentityProblem(config: { mail: { transport: string; from: string } }): string | null {
  if (config.mail.transport !== 'smtp') return null;
  const domain = fromDomain(config.mail.from);
  if (domain && !isLocalhost(domain)) return null;
  return (
    `MAIL_FROM must be set to an address at your sending domain when MAIL_TRANSPORT=smtp ` +
    `(it is ${domain ? `at ${domain}` : 'without a domain'}: "${bareOf(config.mail.from)}")`
  );
}

/** A host that names this machine only: `localhost` and names under it, 127.0.0.0/8, [::1], 0.0.0.0. */
const isLoopbackHost = (host: string) => isLocalhost(host) || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '[::1]' || host === '0.0.0.0';

/**
 * A warning for the start-up log, or null: real mail (MAIL_TRANSPORT smtp or http) with a BASE_URL on this
 * machine (BASE_URL's default, http://localhost:PORT) carries tracked links and one-click unsubscribe URLs
 * that point at the recipient's own computer. Not a refusal: a staging relay may send to the team only.
 */
export function mailLinksWarning(config: { mail: { transport: string }; baseUrl: string }): string | null {
  if (config.mail.transport === 'local') return null;
  const host = new URL(config.baseUrl).hostname.toLowerCase();
  if (!isLoopbackHost(host)) return null;
  return (
    `MAIL_TRANSPORT=${config.mail.transport} sends real mail but BASE_URL is ${config.baseUrl}: its links and ` +
    'unsubscribe URLs will point at this machine, not at the service; set BASE_URL to the public https:// address'
  );
}
