/**
 * Which running experiments the maintenance pass attends to, and in what order (docs/decisions/experiments-pacing.md, "Fair
 * across accounts"): each row says when it is due again (`next_look_at`: its wave's look, or the next pass while mail
 * is still to draft or send; none yet, just started: due now; migration 20261213100000), and one pass takes those due
 * round-robin across accounts.
 */
import type { Queryable } from '../db.js';
import { waveOf } from './experiment-counts.js';
import { type Experiment, type Row, toExperiment } from './experiments.repository.js';

export interface ExperimentKey {
  accountId: string;
  id: string;
}

export function passQueue(q: Queryable) {
  return {
    /**
     * Up to `limit` running experiments due by `now`, in the order one pass attends to them: round-robin across
     * accounts, every account's most overdue first, then every account's second, and so on; within a round the most
     * overdue first. So one account's many experiments never push another account's back. Keys only: the pass loads
     * them a batch at a time (`load`).
     */
    async due(now: number, limit: number): Promise<ExperimentKey[]> {
      const { rows } = (await q.raw(
        `SELECT account_id, id FROM (
           SELECT account_id, id, next_look_at,
                  row_number() OVER (PARTITION BY account_id ORDER BY next_look_at NULLS FIRST, started_at, id) AS turn
             FROM experiments WHERE status = 'running' AND (next_look_at IS NULL OR next_look_at <= ?)) d
          ORDER BY turn, next_look_at NULLS FIRST, account_id, id LIMIT ?`,
        [now, limit],
      )) as { rows: { account_id: string; id: string }[] };
      return rows.map((r) => ({ accountId: r.account_id, id: r.id }));
    },

    /** The running experiments of these keys, in their order (one that ended meanwhile is left out). */
    async load(keys: readonly ExperimentKey[]): Promise<Experiment[]> {
      if (!keys.length) return [];
      const { rows } = (await q.raw(
        `SELECT e.* FROM unnest(?::text[], ?::text[]) WITH ORDINALITY AS k(account_id, id, n)
           JOIN experiments e ON e.account_id = k.account_id AND e.id = k.id AND e.status = 'running' ORDER BY k.n`,
        [keys.map((k) => k.accountId), keys.map((k) => k.id)],
      )) as { rows: Row[] };
      return rows.map(toExperiment);
    },

    /** Where a mail experiment's current wave stands (experiment-counts.ts waveOf). */
    wave: (e: Experiment, maturedBy: number) => waveOf(q, e, maturedBy),

    /** The pass attended to a running experiment at `at`; it is due again at `next`. */
    async attended(key: ExperimentKey, at: number, next: number): Promise<void> {
      await q('experiments')
        .where({ account_id: key.accountId, id: key.id, status: 'running' })
        .update({ looked_at: at, next_look_at: next });
    },
  };
}
