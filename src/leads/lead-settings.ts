import { accountSettings } from '../accounts/settings.repository.js';
import type { Queryable } from '../db.js';
import { NotFound } from '../errors.js';

/**
 * Whether a reply from one contact stops the sequences to the company's other contacts (the same lead):
 * an account setting, `accounts.reply_stops_company`, default true. Answers the accounts among `accountIds`
 * where it does.
 */
export async function replyStopsCompany(q: Queryable, accountIds: string[]): Promise<Set<string>> {
  if (!accountIds.length) return new Set();
  const ids = await accountSettings(q).whereTrue(accountIds, 'reply_stops_company');
  return new Set(ids);
}

/** Sets the account's `reply_stops_company`; NotFound for an unknown account. */
export async function setReplyStopsCompany(q: Queryable, accountId: string, stops: boolean): Promise<{ replyStopsCompany: boolean }> {
  const n = await accountSettings(q).set(accountId, { reply_stops_company: stops });
  if (!n) throw new NotFound();
  return { replyStopsCompany: stops };
}

/** The account's lead settings, as `settings get` shows them. */
export async function leadSettings(q: Queryable, accountId: string): Promise<{ replyStopsCompany: boolean }> {
  const stops = await accountSettings(q).column<boolean>(accountId, 'reply_stops_company');
  if (stops === undefined) throw new NotFound();
  return { replyStopsCompany: stops };
}
