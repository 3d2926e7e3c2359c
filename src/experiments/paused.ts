/**
 * A paused experiment's rows (experiments.repository.ts owns the table): paused by the sample ratio check, resumed or
 * ended by a person (docs/decisions/experiments-guarantee.md, "Sample ratio mismatch pauses the experiment").
 */
import type { Queryable } from '../db.js';
import type { Decision } from '../statistics/stopping.js';
import type { Experiment } from './experiments.repository.js';

export function pausedExperiments(q: Queryable) {
  return {
    /** Pauses a running experiment on a ratio mismatch, with the decision it read then; false when it is no longer running. */
    async pause(e: Experiment, decision: Decision): Promise<boolean> {
      const n = await q('experiments')
        .where({ account_id: e.accountId, id: e.id, status: 'running' })
        .update({ status: 'paused', decision: JSON.stringify(decision) });
      return n > 0;
    },

    /** A person resumed a paused experiment: running again, the ratio check reading counts after `from`. */
    async resume(accountId: string, id: string, from: number[]): Promise<boolean> {
      const n = await q('experiments')
        .where({ account_id: accountId, id, status: 'paused' })
        .update({ status: 'running', draft: q.raw("draft || jsonb_build_object('ratioFrom', ?::jsonb)", [JSON.stringify(from)]) });
      return n > 0;
    },

    /** A person ended a paused experiment: no winner, the decision it paused on marked as a person's stop. */
    async endPaused(accountId: string, id: string, at: number): Promise<boolean> {
      const n = await q('experiments')
        .where({ account_id: accountId, id, status: 'paused' })
        .update({
          status: 'no_winner',
          decided_at: at,
          decision: q.raw(`coalesce(decision, '{}'::jsonb) || '{"state":"stopped","stoppedBy":"person"}'::jsonb`),
        });
      return n > 0;
    },
  };
}
