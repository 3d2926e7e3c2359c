import type { Trx } from '../db.js';
import { recordChannelEvents, type ChannelEvent } from '../results/channel-events.js';
import type { ProviderEvent } from './provider-http.js';

const str = (v: unknown) => (typeof v === 'string' ? v.trim() : '');
const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : v === undefined ? 0 : null);

/** An `ad_metrics` event's numbers, or null when one is not a whole number ≥ 0 or it names no test. */
export function readAdMetrics(e: ProviderEvent) {
  const testId = str(e.data.testId);
  const impressions = count(e.data.impressions);
  const clicks = count(e.data.clicks);
  const spend = count(e.data.spend);
  const conversions = count(e.data.conversions);
  if (!testId || impressions === null || clicks === null || spend === null || conversions === null) return null;
  return { testId, variant: str(e.data.variant) || null, impressions, clicks, spend, conversions };
}

/**
 * One ad platform event's effect, in the poll's transaction. `ad_metrics` (`data: { testId, variant,
 * impressions, clicks, spend, conversions }`, counts since the bridge's previous event for that test and
 * variant, spend in minor units): a row per event for `/results` `ads.tests`, and ads channel events
 * (`impression`, `platform_click`, `platform_conversion` with the count as amount; `spend` with the money).
 * Each keyed by the event id, so a poll repeated after a crash counts nothing twice. Other types and
 * malformed metrics are ignored (the cursor moves past them).
 */
export async function applyAdsEvent(trx: Trx, accountId: string, e: ProviderEvent, now: number): Promise<boolean> {
  if (e.type !== 'ad_metrics') return false;
  const m = readAdMetrics(e);
  if (!m) return false;
  const at = e.at !== null && Number.isInteger(e.at) && e.at <= now ? e.at : now;
  const inserted = await trx('ad_metrics')
    .insert({ account_id: accountId, event_id: e.id, test_id: m.testId, variant: m.variant, ...pick(m), at })
    .onConflict(['account_id', 'event_id'])
    .ignore()
    .returning('event_id');
  if (!inserted.length) return true;
  const refId = `ads-${e.id}`;
  const events: ChannelEvent[] = [];
  const add = (type: string, amount: number) => {
    if (amount > 0) events.push({ channel: 'ads', type, at, amount, refId });
  };
  add('impression', m.impressions);
  add('platform_click', m.clicks);
  add('platform_conversion', m.conversions);
  add('spend', m.spend);
  if (events.length)
    await recordChannelEvents(
      trx,
      events.map((event) => ({ accountId, event })),
    );
  return true;
}

const pick = (m: { impressions: number; clicks: number; spend: number; conversions: number }) => ({
  impressions: m.impressions,
  clicks: m.clicks,
  spend: m.spend,
  conversions: m.conversions,
});
