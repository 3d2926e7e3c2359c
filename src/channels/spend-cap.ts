import type { Queryable } from '../db.js';
import { BadRequest, Rejected } from '../errors.js';
import type { EarlierFences } from './channel.types.js';

/** The operator's monthly spend cap on an account (minor currency units). */
export interface SpendCap {
  accountId: string;
  monthlyCap: number;
  currency: string;
}

/** An ISO 4217 currency code as the ads adapters accept it. */
export const CURRENCY = /^[A-Z]{3}$/;
/** The largest cap accepted: well inside a bigint and a JS safe integer. */
const MAX_CAP = 1_000_000_000_000;

/** Sets (or replaces) the account's monthly spend cap: `--monthly-cap` minor units (> 0), `--currency` ISO 4217. */
export async function setSpendCap(q: Queryable, accountId: string, monthlyCap: string, currency: string, at: number): Promise<SpendCap> {
  if (!/^\d{1,13}$/.test(monthlyCap.trim()) || Number(monthlyCap) <= 0 || Number(monthlyCap) > MAX_CAP) {
    throw new BadRequest(`--monthly-cap must be a whole number of minor currency units (cents), 1 to ${MAX_CAP}`);
  }
  const cur = currency.trim().toUpperCase();
  if (!CURRENCY.test(cur)) throw new BadRequest('--currency must be a three-letter ISO 4217 code (USD, EUR, …)');
  const cap = { accountId, monthlyCap: Number(monthlyCap), currency: cur };
  await q('ads_spend_caps')
    .insert({ account_id: accountId, monthly_cap: cap.monthlyCap, currency: cur, updated_at: at })
    .onConflict('account_id')
    .merge();
  return cap;
}

/** The start of the calendar month (UTC) `at` falls in, epoch ms. */
export function monthStart(at: number): number {
  const d = new Date(at);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** An amount in minor units, in words: 1250 EUR → "12.50 EUR". */
export const money = (minor: number, currency: string) => `${(minor / 100).toFixed(2)} ${currency}`;

/** The account's monthly spend cap, or null when the operator set none (`lock`: FOR UPDATE, in the caller's transaction). */
export async function spendCapOf(q: Queryable, accountId: string, lock = false): Promise<SpendCap | null> {
  const query = q('ads_spend_caps').where({ account_id: accountId }).first();
  const cap = (await (lock ? query.forUpdate() : query)) as { monthly_cap: string | number; currency: string } | undefined;
  return cap ? { accountId, monthlyCap: Number(cap.monthly_cap), currency: cap.currency } : null;
}

/**
 * The monthly cap guard, inside the transaction that writes a budget change's fence. The cap row is
 * locked FOR UPDATE first, so two approvals of different changes on one account are checked one after
 * the other: the second sees the first's fence. Counted this month: every spend fence not void
 * (`not_sent`) whose change increased the budget, in flight or applied (the shipping path's `earlier` fences,
 * from the start of the month). Refused (409) when no cap is
 * set, when the currency differs from the cap's, or when this increase would pass the cap. A decrease
 * always passes. Answers the cap's currency (a change that names none is in it).
 */
export async function checkSpendCap(
  trx: Queryable,
  accountId: string,
  change: { amount: number; currency: string | null },
  at: number,
  earlier: EarlierFences,
): Promise<string> {
  const cap = await spendCapOf(trx, accountId, true);
  if (!cap) {
    throw new Rejected(
      'no monthly spend cap is set on this account; the operator sets one (channel spend-cap) before any budget change applies',
    );
  }
  const limit = cap.monthlyCap;
  if (change.currency !== null && change.currency !== cap.currency) {
    throw new Rejected(`this budget change is in ${change.currency} but the monthly spend cap is in ${cap.currency}; nothing was applied`);
  }
  if (change.amount <= 0) return cap.currency;
  const used = await earlier.increasesSince(monthStart(at));
  if (used + change.amount > limit) {
    const left = Math.max(0, limit - used);
    throw new Rejected(
      `this budget change (+${money(change.amount, cap.currency)}) would pass the monthly spend cap of ${money(limit, cap.currency)}: ` +
        `${money(left, cap.currency)} is left this month; nothing was applied`,
      { monthlyCap: limit, used, left, currency: cap.currency },
    );
  }
  return cap.currency;
}
