import type { Db } from '../db.js';
import type { Logger } from '../logger.js';
import { rollupFold } from './rollups.repository.js';

export interface RollupPass {
  events: number;
  deltas: number;
  watermark: string | null;
}

const lower = (a: string, b: string | null) => (b !== null && BigInt(b) < BigInt(a) ? b : a);

/**
 * Folds channel events and the harness/conversion deltas into the minute and hourly rollups, up to the oldest transaction
 * still running (every one below it has ended, so none can still commit rows below the new watermark), at most
 * about `limit` rows of each per pass (a transaction's rows always go together). Rollups and the watermark move
 * in one transaction: a pass that dies counts nothing, and a second pass running at once skips (the row lock).
 * `/results` is exact whether or not a pass ran; passes only keep its raw tail short.
 */
export async function runRollupPass(db: Db, log?: Logger, limit = 100_000): Promise<RollupPass> {
  const pass = await db.transaction(async (trx) => {
    const fold = rollupFold(trx);
    const lo = await fold.lockWatermark();
    if (lo === null) return { events: 0, deltas: 0, watermark: null };
    const settled = await fold.settled();
    let hi = BigInt(settled) > BigInt(lo) ? settled : lo;
    hi = lower(hi, await fold.nthXid('channel_events', lo, hi, limit));
    hi = lower(hi, await fold.nthXid('results_rollup_deltas', lo, hi, limit));
    // One transaction wrote more than `limit` rows: fold it whole.
    if (hi === lo && BigInt(settled) > BigInt(lo)) hi = String(BigInt(lo) + 1n);
    if (hi === lo) return { events: 0, deltas: 0, watermark: lo };
    const events = await fold.foldEvents(lo, hi);
    const deltas = await fold.foldDeltas(hi);
    await fold.setWatermark(hi);
    return { events, deltas, watermark: hi };
  });
  if (pass.events || pass.deltas) log?.info(pass, 'results rolled up');
  return pass;
}

/**
 * Passes until the rollups reach the oldest running transaction (tests, benchmarks, a backlog after an outage),
 * at most `maxPasses` of them. The oldest running transaction is the whole cluster's (xids are), so the watermark
 * may stop short of rows a long transaction of any database started before; those rows stay counted raw.
 */
export async function rollUpAll(db: Db, limit = 100_000, maxPasses = 10_000): Promise<void> {
  // A pass takes a transaction id of its own (it locks the watermark row), so the watermark moves on every
  // pass: the end is a pass that folded nothing, or found another pass holding the watermark.
  for (let pass = 0; pass < maxPasses; pass++) {
    const { events, deltas, watermark } = await runRollupPass(db, undefined, limit);
    if (watermark === null || events + deltas === 0) return;
  }
}
