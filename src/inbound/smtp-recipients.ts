import { bareAddress, REPLY_TOKEN } from '../mail/outbound.js';
import { metrics } from '../metrics/registry.js';
import { inboundRepository } from './inbound.repository.js';
import { operatorMailRepository } from './operator-mail.repository.js';
import type { IntakeDeps } from './intake.service.js';
import { accountByContent } from './placement.js';

/** The SMTP door's outcome counted for each refusal's reply code (gas_public_door_requests_total). */
const REFUSED: Record<number, string> = {
  421: 'closed',
  450: 'limited',
  451: 'unavailable',
  452: 'over_budget',
  550: 'no_recipient',
  552: 'too_large',
};

export type Refusal = Error & { responseCode: number };

/** An SMTP refusal, counted: `code` is the reply smtp-server sends (4xx: try later, 5xx: never). */
export function refusal(code: number, message: string): Refusal {
  metrics.publicDoor.inc({ door: 'smtp', outcome: REFUSED[code] ?? 'refused' });
  return Object.assign(new Error(message), { responseCode: code });
}

/** The domain of an address, lowercased ('' when there is none). */
function domainOf(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

/**
 * The address bounces of mail sent before each send had its own envelope sender (`bounces+<token>@`) came
 * back to: MAIL_FROM, when it is at the inbound domain; null when bounces went elsewhere. Still taken, so
 * a late DSN of such mail (matched by the original it quotes) is not refused.
 */
export function bounceAddress(config: IntakeDeps['config']): string | null {
  const address = bareAddress(config.mail.from);
  return domainOf(address) === config.inbound.domain ? address : null;
}

/**
 * `accountId`: the account a token names; null for the bare bounce address, whose account the message itself must
 * name (messageAccount). `counts`: the refusal counts against the client's messages per minute (a guessed address).
 */
export type RecipientVerdict = { ok: true; accountId: string | null; postmaster?: true } | { ok: false; error: Refusal; counts: boolean };

/**
 * Whether the listener takes mail for `address`: a live `reply+`/`unsubscribe+`/`bounces+` token of ours
 * (one indexed lookup, which also reads the raw bytes its account keeps) or the bounce address of mail sent
 * before envelope senders named their send (MAIL_FROM at the inbound domain). Anything else
 * is refused before a byte of the message is read; a token whose account is over its storage cap gets 452.
 */
export async function judgeRecipient(deps: IntakeDeps, address: string, bounce: string | null): Promise<RecipientVerdict> {
  const { domain, accountStorageBytes } = deps.config.inbound;
  const lower = address.toLowerCase();
  if (domainOf(lower) !== domain) {
    return { ok: false, counts: true, error: refusal(550, `5.7.1 relay not permitted: this server takes mail for @${domain} only`) };
  }
  if (bounce && lower === bounce) return { ok: true, accountId: null };
  if (lower === `postmaster@${domain}`) return postmaster(deps);
  // Made only when refused: making a refusal counts it.
  const unknown = () => ({ ok: false as const, counts: true, error: refusal(550, '5.1.1 no such recipient') });
  const m = /^(?:reply|unsubscribe|bounces)\+([^@]+)@/.exec(lower);
  if (!m || !REPLY_TOKEN.test(m[1]!)) return unknown();
  let found: Awaited<ReturnType<ReturnType<typeof inboundRepository>['tokenAccount']>>;
  try {
    found = await inboundRepository(deps.db).tokenAccount(m[1]!);
  } catch {
    return { ok: false, counts: false, error: refusal(451, '4.3.0 the recipient could not be checked; try again later') };
  }
  if (!found) return unknown();
  if (found.storedBytes >= accountStorageBytes) {
    return { ok: false, counts: false, error: refusal(452, '4.2.2 mailbox full; try again later') };
  }
  return { ok: true, accountId: found.accountId };
}

/**
 * `postmaster@` the inbound domain (RFC 5321 requires it be taken): operator mail, no account's, while the operator
 * mail kept is under INBOUND_POSTMASTER_BYTES (452 past it, as a full mailbox).
 */
async function postmaster(deps: IntakeDeps): Promise<RecipientVerdict> {
  try {
    if ((await operatorMailRepository(deps.db).totalBytes()) >= deps.config.inbound.postmasterBytes) {
      return { ok: false, counts: false, error: refusal(452, '4.2.2 mailbox full; try again later') };
    }
  } catch {
    return { ok: false, counts: false, error: refusal(451, '4.3.0 the recipient could not be checked; try again later') };
  }
  return { ok: true, accountId: null, postmaster: true };
}

/**
 * Mail to postmaster goes in a transaction of its own (it is kept for the operator, apart from any account's mail):
 * a recipient that would mix the two is asked (452) to come in another transaction. Null when it may join.
 */
export function mixesPostmaster(taken: number, postmasterTaken: boolean, isPostmaster: boolean): Refusal | null {
  if (taken === 0 || postmasterTaken === isPostmaster) return null;
  return refusal(452, '4.5.3 mail to postmaster goes in a transaction of its own; send this recipient in another transaction');
}

/**
 * A recipient of another account than those already taken for this message: one message is stored under one
 * account, so the sender's MTA is asked (452, as for too many recipients) to send it to this one in another
 * transaction. Null when the recipient may join the message.
 */
export function otherAccount(taken: (string | null)[], accountId: string | null): Refusal | null {
  if (!accountId || taken.every((a) => a === null || a === accountId)) return null;
  return refusal(452, '4.5.3 this message already goes to another account; send it to this recipient in another transaction');
}

/**
 * The account a message is stored under, before it is stored: the one its token recipients name, else (only the
 * bare bounce address among them) what the message itself names of ours (placement.ts). A message that names no
 * account is refused 550 and nothing is kept; one whose account is over its storage cap gets 452, as at RCPT.
 * Throws when Postgres does not answer (the caller answers 451).
 */
export async function messageAccount(
  deps: IntakeDeps,
  accounts: (string | null)[],
  raw: Buffer,
  rcptTo: string[],
): Promise<{ ok: true; accountId: string } | { ok: false; error: Refusal }> {
  const named = accounts.find((a): a is string => a !== null);
  if (named) return { ok: true, accountId: named };
  const { domain, accountStorageBytes } = deps.config.inbound;
  const accountId = await accountByContent(deps.db, domain, raw, rcptTo);
  if (!accountId) return { ok: false, error: refusal(550, '5.7.1 this message answers no mail of ours; nothing was kept') };
  if ((await inboundRepository(deps.db).accountBytes(accountId)) >= accountStorageBytes) {
    return { ok: false, error: refusal(452, '4.2.2 mailbox full; try again later') };
  }
  return { ok: true, accountId };
}
