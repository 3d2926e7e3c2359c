import type { Queryable } from '../db.js';
import { threadsRepository } from '../mail/threads.repository.js';
import { classifyKind, type KindVerdict } from './classify.js';
import { matchMail, recipientsOf, tokenAddresses, type TokenAddress } from './match.js';
import { parseMail, type ParsedMail } from './parse.js';
import { smtpSenderMatch } from './smtp-sender.js';

/** What a received message names: its parse, its token addresses, its kind, and the address a match by sender uses. */
export interface ReadMail {
  mail: ParsedMail;
  tokens: TokenAddress[];
  verdict: KindVerdict;
  /** A bounce, a complaint or any other report: matched by what it says of the original. */
  report: boolean;
  /** The address a match by sender looks for: a report's failed recipient, else the From. */
  matchedAddress: string | null;
}

/** Parses and classifies a message (processing and the listener's placement read it the same way). */
export async function readMail(
  raw: Buffer,
  rcptTo: string[],
  domain: string,
): Promise<{ ok: true; read: ReadMail } | { ok: false; reason: string }> {
  const parsed = await parseMail(raw);
  if (!parsed.ok) return parsed;
  const mail = parsed.mail;
  const tokens = tokenAddresses(recipientsOf(mail, rcptTo), domain);
  const verdict = classifyKind(
    mail,
    tokens.some((t) => t.kind === 'unsubscribe'),
    tokens.length > 0 && tokens.every((t) => t.kind === 'bounce'),
  );
  const report = verdict.kind === 'bounce' || verdict.kind === 'complaint' || mail.reportType !== null;
  const matchedAddress = report ? (verdict.bounce?.recipient ?? null) : mail.from;
  return { ok: true, read: { mail, tokens, verdict, report, matchedAddress } };
}

/**
 * The account a message to the bare bounce address belongs to, worked out from what we issued before it is stored
 * (docs/decisions/inbound-smtp.md "Every message is stored under its account"): a token of ours in its headers,
 * one of our Message-IDs in In-Reply-To/References, a report's copy of our original, else the one account that
 * ever mailed its sender (a reply's From, a report's failed recipient). Null when nothing names an account, or
 * when the message cannot be parsed: the listener refuses it (550) and stores nothing.
 */
export async function accountByContent(db: Queryable, domain: string, raw: Buffer, rcptTo: string[]): Promise<string | null> {
  const r = await readMail(raw, rcptTo, domain);
  if (!r.ok) return null;
  const { mail, tokens, verdict, report, matchedAddress } = r.read;
  const ctx = {
    domain,
    accountId: null,
    tokens,
    report,
    bounce: verdict.kind === 'bounce',
    bounceRecipient: verdict.bounce?.recipient ?? null,
  };
  let match = await matchMail(threadsRepository(db), ctx, mail);
  if (!match.ok && !tokens.length) match = await smtpSenderMatch(db, matchedAddress, match);
  return match.ok ? match.thread.accountId : null;
}
