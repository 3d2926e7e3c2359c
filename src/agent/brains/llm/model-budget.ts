import type { Queryable } from '../../../db.js';
import { metrics } from '../../../metrics/registry.js';
import type { Deps } from '../../../deps.js';
import { queueTurn } from '../../core/drain.js';
import { postponeTurn } from '../../replies/reply-wakes.js';
import { turnsRepository } from '../../core/turns.repository.js';

/**
 * The daily budget of language-model calls per account (docs/decisions/agent-wakes.md): each round of
 * an `llm` turn takes one call from the account's count for the UTC day. Once it is spent no model is
 * called until the day ends; an event or a reply's wake turned away on its first round is kept as a
 * copy due when the budget resets, and the refusal is logged and counted in `/agent/status`.
 */

const DAY = 86_400_000;

/** The UTC day of `at` (YYYY-MM-DD) and when the next one starts. */
export function budgetDay(at: number): { day: string; resetsAt: number } {
  return { day: new Date(at).toISOString().slice(0, 10), resetsAt: Math.floor(at / DAY) * DAY + DAY };
}

/**
 * Counts one refused call, a turn's or the reply classifier's: `gas_llm_budget_refusals_total`, and the account's
 * row for the day of `at`, marking when the budget ran out.
 */
async function countRefusal(q: Queryable, accountId: string, at: number): Promise<void> {
  metrics.llmBudgetRefusals.inc();
  await q('agent_model_calls')
    .where({ account_id: accountId, day: budgetDay(at).day })
    .update({ refused: q.raw('refused + 1'), exhausted_at: q.raw('coalesce(exhausted_at, ?)', [at]) });
}

/** What a brain asks before each model call. */
export interface ModelBudget {
  /** Takes one call from the account's budget for today; false when it is spent. */
  take(accountId: string): Promise<boolean>;
  /**
   * Records a refused call for this turn, keeps its input when it can (`firstRound`: nothing of the turn
   * ran yet; an event or a wake), logs it, and returns the turn's failure text.
   */
  refused(accountId: string, turnId: string | undefined, firstRound: boolean): Promise<string>;
}

export function modelBudget(deps: Pick<Deps, 'config' | 'db' | 'logger' | 'queues'>): ModelBudget {
  const budget = deps.config.agent.limits.modelCallsPerDay;
  return {
    async take(accountId) {
      const at = Date.now();
      const { day } = budgetDay(at);
      const { rows } = await deps.db.raw(
        `INSERT INTO agent_model_calls (account_id, day, calls, exhausted_at) VALUES (?, ?, 1, CASE WHEN 1 >= ?::int THEN ?::bigint END)
         ON CONFLICT (account_id, day) DO UPDATE SET calls = agent_model_calls.calls + 1,
           exhausted_at = CASE WHEN agent_model_calls.calls + 1 >= ?::int THEN ?::bigint ELSE agent_model_calls.exhausted_at END
         WHERE agent_model_calls.calls < ?::int
         RETURNING calls`,
        [accountId, day, budget, at, budget, at, budget],
      );
      return rows.length > 0;
    },
    async refused(accountId, turnId, firstRound) {
      const at = Date.now();
      const { resetsAt } = budgetDay(at);
      const until = new Date(resetsAt).toISOString();
      await countRefusal(deps.db, accountId, at);
      const turn = turnId ? await turnsRepository(deps.db).find(accountId, turnId) : null;
      const keep = firstRound && turn !== null && (turn.kind === 'event' || turn.kind === 'wake');
      const copy = keep ? await deps.db.transaction((trx) => postponeTurn(trx, turn, resetsAt, at)) : null;
      if (copy) await queueTurn(deps, copy);
      deps.logger.warn(
        { accountId, turnId, budget, resetsAt, postponedAs: copy?.id ?? null },
        'daily model-call budget spent; the model was not called',
      );
      const spent = `the account's daily budget of ${budget} model calls is spent until ${until}`;
      return copy ? `${spent}; this input waits as ${copy.id} until then` : spent;
    },
  };
}

/** The budget as `/agent/status` shows it (`modelCalls`). */
export async function modelCallsStatus(q: Queryable, accountId: string, budget: number, at = Date.now()) {
  const { day, resetsAt } = budgetDay(at);
  const row = await q('agent_model_calls')
    .where({ account_id: accountId, day })
    .first<{ calls: number; refused: number; exhausted_at: number | string | null } | undefined>();
  const used = row?.calls ?? 0;
  const spent = used >= budget || (row?.refused ?? 0) > 0;
  return {
    budget,
    used,
    refused: row?.refused ?? 0,
    exhaustedAt: spent && row?.exhausted_at != null ? Number(row.exhausted_at) : null,
    resetsAt,
  };
}

/**
 * The budget as the reply classifier asks it, outside any turn: one call taken per reply the model would
 * judge; when the budget is spent the reply is judged by the rules instead, and the refusal is counted
 * (`modelCalls.refused`) and logged. A reply is never held back for the budget.
 */
export function classifierBudget(deps: Pick<Deps, 'config' | 'db' | 'logger' | 'queues'>, accountId: string): () => Promise<boolean> {
  return async () => {
    if (await modelBudget(deps).take(accountId)) return true;
    const at = Date.now();
    await countRefusal(deps.db, accountId, at);
    const { resetsAt } = budgetDay(at);
    deps.logger.warn({ accountId, resetsAt }, 'daily model-call budget spent; a reply was classified by the rules');
    return false;
  };
}
