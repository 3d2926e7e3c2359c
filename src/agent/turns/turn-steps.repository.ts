import { run, type Runner, type Statement } from '../../db.js';
import type { ToolCall, ToolResult } from '../core/brain.js';
import { ASYNC_COMMIT } from '../core/turn-statements.js';

/**
 * A turn's executed steps (docs/decisions/agent.md, "Agent turns: crash recovery"). Each step's record is
 * written in the transaction (or statement) that made its effect, so a committed record means a
 * committed effect and the other way round; the primary key (account, turn, round, idx) lets a step commit once.
 */

/** Where a step sits in its turn; `round` carries the round's proposed calls when this is its first step. */
export interface StepAt {
  round: number;
  idx: number;
  result: ToolResult;
  /** Set on a round's first step (idx 0): the calls the brain proposed and whether it said it was done. */
  proposed: { calls: ToolCall[]; done: boolean } | null;
}

/** A round rebuilt from its recorded steps: the proposed calls and the results of those that ran. */
export interface RecordedRound {
  calls: ToolCall[];
  done: boolean;
  results: ToolResult[];
}

const STEP_COLUMNS = '(account_id, turn_id, round, idx, result, round_calls, round_done)';

/** A tool's step record, inside the transaction that made its effect (a synchronous commit). */
const STEP: Statement = {
  name: 'agent-turn-step',
  text: `WITH step AS (
    INSERT INTO agent_turn_steps ${STEP_COLUMNS} VALUES ($1, $2, $3::int, $4::int, $5::jsonb, $6::jsonb, $7::boolean)
    RETURNING turn_id
  )
  UPDATE agent_turns SET steps_done = steps_done + 1 WHERE account_id = $1 AND id = (SELECT turn_id FROM step)`,
};

/**
 * A reply bubble and its step record in one statement (asynchronous commit, as a running turn's
 * bookkeeping): the bubble exists exactly when its step does.
 */
const REPLY_STEP: Statement = {
  name: 'agent-turn-reply-step',
  text: `WITH step AS (
    INSERT INTO agent_turn_steps ${STEP_COLUMNS}
    SELECT $1, $2, $3::int, $4::int, $5::jsonb, $6::jsonb, $7::boolean FROM (SELECT ${ASYNC_COMMIT}) async_commit
    RETURNING turn_id
  ), bubble AS (
    INSERT INTO agent_replies (account_id, turn_id, text, at) SELECT $1, turn_id, $8, $9::bigint FROM step
  )
  UPDATE agent_turns SET steps_done = steps_done + 1 WHERE account_id = $1 AND id = (SELECT turn_id FROM step)`,
};

const STEPS_OF: Statement = {
  name: 'agent-turn-steps-of',
  text: `SELECT round, idx, result, round_calls, round_done FROM agent_turn_steps
    WHERE account_id = $1 AND turn_id = $2 ORDER BY round, idx`,
};

const values = (accountId: string, turnId: string, s: StepAt) => [
  accountId,
  turnId,
  s.round,
  s.idx,
  JSON.stringify(s.result),
  s.proposed ? JSON.stringify(s.proposed.calls) : null,
  s.proposed ? s.proposed.done : null,
];

export const turnSteps = {
  /** Records a tool's step; run it in the transaction of the tool's own writes. */
  async record(on: Runner, accountId: string, turnId: string, step: StepAt): Promise<void> {
    await run(on, STEP, values(accountId, turnId, step));
  },
  /** One reply bubble and its step, atomically. */
  async reply(on: Runner, accountId: string, turnId: string, step: StepAt, text: string, at: number): Promise<void> {
    await run(on, REPLY_STEP, [...values(accountId, turnId, step), text, at]);
  },
  /**
   * The turn's recorded rounds, in order, each with its proposed calls and the results of the calls that
   * ran. Rounds are recorded with their first step, so they come without gaps.
   */
  async rounds(on: Runner, accountId: string, turnId: string): Promise<RecordedRound[]> {
    const rows = await run<{ round: number; idx: number; result: ToolResult; round_calls: ToolCall[] | null; round_done: boolean | null }>(
      on,
      STEPS_OF,
      [accountId, turnId],
    );
    const rounds: RecordedRound[] = [];
    for (const r of rows) {
      if (r.idx === 0) {
        if (r.round !== rounds.length) throw new Error(`turn ${turnId} has a gap in its recorded rounds at ${r.round}`);
        rounds.push({ calls: r.round_calls ?? [], done: r.round_done ?? false, results: [] });
      }
      const round = rounds[r.round];
      if (!round || r.idx !== round.results.length)
        throw new Error(`turn ${turnId} has a gap in its recorded steps at ${r.round}.${r.idx}`);
      round.results.push(r.result);
    }
    return rounds;
  },
};
