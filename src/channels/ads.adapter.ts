import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { Rejected } from '../errors.js';
import { textOf, type ChannelAdapter, type Work } from './channel.types.js';
import { providerShipping, providerTimings } from './network.adapter.js';
import { checkSpendCap, CURRENCY } from './spend-cap.js';

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** One variant of an ad test as it ships. */
export interface AdVariant {
  headline: string;
  body: string;
  url?: string;
}

/** What is wrong with an ad test's payload, in words for the 409, or null when it can ship. */
export function adTestProblem(p: Record<string, unknown>): string | null {
  const variants = p.variants;
  if (!Array.isArray(variants) || variants.length < 1 || variants.length > 5) return 'an ad test has 1 to 5 variants';
  for (const [i, v] of (variants as unknown[]).entries()) {
    const o = (v && typeof v === 'object' ? v : {}) as Record<string, unknown>;
    if (!textOf(o.headline).trim() || !textOf(o.body).trim()) return `variant ${i + 1} needs a headline and a body`;
    if (o.url !== undefined && o.url !== null && !/^https?:\/\/\S+$/.test(textOf(o.url)))
      return `variant ${i + 1}'s url must be an http(s) URL`;
  }
  if (!isInt(p.budgetCap) || p.budgetCap <= 0) return 'budgetCap must be a whole number of minor currency units (cents) above 0';
  if (!CURRENCY.test(textOf(p.currency))) return 'currency must be a three-letter ISO 4217 code';
  if (!isInt(p.durationDays) || p.durationDays < 1 || p.durationDays > 90) return 'durationDays must be a whole number from 1 to 90';
  return null;
}

const variantsOf = (p: Record<string, unknown>): AdVariant[] =>
  (Array.isArray(p.variants) ? (p.variants as Record<string, unknown>[]) : []).map((v) => ({
    headline: textOf(v?.headline).trim(),
    body: textOf(v?.body).trim(),
    ...(textOf(v?.url) ? { url: textOf(v?.url) } : {}),
  }));

/**
 * `ad_test`: variants of an ad (1–5, each a headline, a body and an optional landing URL) with a budget
 * cap (minor units) in a currency and a duration (1–90 days), created at the ad platform through the
 * account's `ads` connection (docs/provider-bridge.md). A payload that is not one is refused before a
 * fence is written.
 */
export const adTestAdapter = (config: Config, db: Db): ChannelAdapter => ({
  kind: 'ad_test',
  channel: 'ads',
  service: 'the ad platform',
  noun: 'ad test',
  canReship: true,
  needsRecipient: false,
  timings: providerTimings(config),
  workOf(card): Work {
    const p = card.payload;
    const problem = adTestProblem(p);
    return {
      kind: 'ad_test',
      to: null,
      subject: card.title,
      body: '',
      details: problem
        ? { problem }
        : { variants: variantsOf(p), budgetCap: p.budgetCap, currency: p.currency, durationDays: p.durationDays },
    };
  },
  async prepare(_trx, fencing, work) {
    const problem = textOf(work.details.problem);
    if (problem) throw new Rejected(`this ad test cannot ship: ${problem}; request changes so the agent fixes it`);
    return { details: { accountId: fencing.accountId } };
  },
  ...providerShipping(config, db, 'ads'),
});

/** What is wrong with a budget change, or null. `amount` is the change (minor units; negative lowers the budget). */
export function budgetChangeProblem(b: Record<string, unknown>): string | null {
  if (!isInt(b.amount) || b.amount === 0) return 'its amount must be a whole number of minor currency units (cents), not 0';
  if (b.currency !== undefined && b.currency !== null && !CURRENCY.test(textOf(b.currency))) {
    return 'its currency must be a three-letter ISO 4217 code';
  }
  for (const f of ['from', 'to'] as const) if (b[f] !== undefined && b[f] !== null && !isInt(b[f])) return `its ${f} must be minor units`;
  return null;
}

/**
 * `spend`: a budget change card (`budgetChange: { channel, currency, period, from, to, amount }`, minor
 * units; no `currency`: the monthly cap's) applied through the account's `ads` connection. It always waits for a person (approval and
 * trust never free it), and the operator's monthly cap (spend-cap.ts) is checked in the fence's
 * transaction, so a change that would pass it is refused with nothing shipped.
 */
export const spendAdapter = (config: Config, db: Db): ChannelAdapter => ({
  kind: 'spend',
  channel: 'ads',
  service: 'the ad platform',
  noun: 'budget change',
  canReship: true,
  needsRecipient: false,
  timings: providerTimings(config),
  workOf(card): Work {
    const raw = (card as { budgetChange?: unknown }).budgetChange;
    const b = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const problem = budgetChangeProblem(b);
    const change = {
      channel: textOf(b.channel) || 'ads',
      currency: textOf(b.currency) || null,
      period: textOf(b.period) || null,
      from: isInt(b.from) ? b.from : null,
      to: isInt(b.to) ? b.to : null,
      amount: isInt(b.amount) ? b.amount : 0,
    };
    return { kind: 'spend', to: null, subject: card.title, body: '', details: problem ? { problem } : change };
  },
  async prepare(trx, fencing, work, earlier) {
    const problem = textOf(work.details.problem);
    if (problem) throw new Rejected(`this budget change cannot be applied: ${problem}; request changes so the agent fixes it`);
    const named = textOf(work.details.currency) || null;
    const change = { amount: Number(work.details.amount), currency: named };
    const currency = await checkSpendCap(trx, fencing.accountId, change, fencing.at, earlier);
    // A change that names no currency (the agent's ship tool gives only an amount) is in the cap's.
    return { details: { accountId: fencing.accountId, currency } };
  },
  ...providerShipping(config, db, 'ads'),
});
