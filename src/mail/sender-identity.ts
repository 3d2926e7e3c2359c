import { accountSettings } from '../accounts/settings.repository.js';
import addressparser from 'nodemailer/lib/addressparser';
import type { Config } from '../config.js';
import { fromDomain } from '../config/mail-identity.js';
import type { Queryable } from '../db.js';
import { BadRequest, NotFound } from '../errors.js';

/** The longest `Name <address>` an account's sending identity may be (a header line stays well under 998). */
export const SENDER_MAX_CHARS = 320;
const ADDRESS = /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

/**
 * `Name <addr>` (or a bare `addr`) as the From every mail of an account carries, normalised, or a
 * BadRequest naming the rule: one address, no line breaks, at one of the domains the operator allowed
 * (MAIL_ALLOWED_FROM_DOMAINS; unset: MAIL_FROM's domain). `field` is what the refusal calls the input:
 * the CLI's flag `--from`, the dashboard's body field `from`.
 */
export function parseSender(config: Config, input: string, field = '--from'): string {
  if (input.length > SENDER_MAX_CHARS) throw new BadRequest(`${field} must be at most ${SENDER_MAX_CHARS} characters`);
  if (/[\r\n\0]/.test(input)) throw new BadRequest(`${field} must be one line`);
  const parsed = addressparser(input);
  const one = parsed.length === 1 && !('group' in parsed[0]!) ? (parsed[0] as { name: string; address: string }) : null;
  if (!one || !ADDRESS.test(one.address))
    throw new BadRequest(`${field} must be one address, written "Name <user@example.com>" or user@example.com`);
  const domain = fromDomain(one.address);
  const allowed = config.mail.identity.allowedFromDomains;
  if (!allowed.includes(domain)) {
    const list = allowed.join(', ') || 'none';
    throw new BadRequest(
      `${field} must be an address at a domain the operator allowed (MAIL_ALLOWED_FROM_DOMAINS: ${list}); ${domain} is not one`,
    );
  }
  const name = one.name.replace(/\s+/g, ' ').trim();
  const address = `${one.address.slice(0, one.address.lastIndexOf('@'))}@${domain}`;
  return name ? `${/[^\w !#$%&'*+/=?^`{|}~-]/.test(name) ? JSON.stringify(name) : name} <${address}>` : address;
}

/** Sets the account's sending identity (`parseSender`'s answer); NotFound for an unknown account. */
export async function setAccountSender(q: Queryable, accountId: string, from: string, at = Date.now()): Promise<void> {
  const n = await accountSettings(q).set(accountId, { mail_from: from, mail_from_set_at: at });
  if (!n) throw new NotFound();
}

/**
 * The From an account's mail is sent as: its own identity while its domain is still one the operator
 * allows, else MAIL_FROM. Read when a send's fence is written, so every ship of that mail carries the same.
 */
export async function senderOf(q: Queryable, config: Config, accountId: string): Promise<string> {
  const own = (await accountSettings(q).column<string | null>(accountId, 'mail_from')) ?? null;
  return own && config.mail.identity.allowedFromDomains.includes(fromDomain(own)) ? own : config.mail.from;
}
