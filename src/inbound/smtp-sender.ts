import type { Queryable } from '../db.js';
import type { Config } from '../config.js';
import { threadsRepository, type Thread } from '../mail/threads.repository.js';
import type { InboundMessage } from './inbound.repository.js';
import type { Match } from './match.js';
import type { ParsedMail } from './parse.js';
import { senderAuthentication, type SenderAuth } from './sender-auth.js';
import { checkSmtpSender } from './smtp-auth.js';

/**
 * Mail received over our SMTP listener at an address with no token (the bounce address) and no thread
 * header of ours has no account to be matched in. It is matched by its sender (a reply's From, a report's
 * failed recipient) when exactly one account ever mailed that address; when several did, nobody can tell
 * which it answers and it stays unplaced. What it may change then depends on its proof (proof.ts), as for
 * mail matched by sender on an account's inbound URL.
 */
export async function smtpSenderMatch(db: Queryable, address: string | null, unmatched: Match): Promise<Match> {
  const to = address?.toLowerCase();
  if (!to) return unmatched;
  const accounts: { account_id: string }[] = await db('mail_threads').distinct('account_id').where({ to_address: to }).limit(2);
  if (accounts.length > 1) return { ok: false, reason: 'no token or thread header, and more than one account mailed its sender' };
  const thread: Thread | null = accounts[0] ? await threadsRepository(db).latestTo(accounts[0].account_id, to) : null;
  return thread ? { ok: true, thread, matchedBy: 'sender' } : unmatched;
}

/**
 * The sender verdict of a message matched by its sender. On an account's inbound URL (via http) the
 * trusted provider received it, so its topmost Authentication-Results field decides (sender-auth.ts).
 * Over our own SMTP listener we are the receiving server: every Authentication-Results field in the
 * message was written by the sender (or by whoever relayed it to us), whatever authserv-id it names, so
 * none is read; only our own DKIM/SPF/DMARC check (smtp-auth.ts) counts.
 */
export async function senderAuthOf(
  config: Pick<Config, 'inbound'>,
  row: Pick<InboundMessage, 'via' | 'clientIp' | 'helo' | 'mailFrom'> & { raw: Buffer },
  mail: Pick<ParsedMail, 'from' | 'auth'>,
): Promise<SenderAuth> {
  if (row.via !== 'smtp') return senderAuthentication(mail.from, mail.auth, config.inbound.auth.trustedAuthservIds);
  return checkSmtpSender(
    row.raw,
    { address: mail.from, fields: mail.auth.fromCount },
    { ip: row.clientIp, helo: row.helo, mailFrom: row.mailFrom },
    { mta: config.inbound.domain, timeoutMs: config.inbound.auth.dnsTimeoutMs, servers: config.inbound.auth.dnsServers },
  );
}
