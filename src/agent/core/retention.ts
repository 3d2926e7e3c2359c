import { deleteBatch, type Prune } from '../../db.js';

/** What retention removes of the agent's history (docs/decisions/retention.md). */
export const agentPrunes = {
  agentSteps: ((q, before, limit) =>
    deleteBatch(
      q,
      'agent_turn_steps',
      '(account_id, turn_id) IN (SELECT account_id, id FROM agent_turns WHERE finished_at < ?)',
      [before],
      limit,
    )) as Prune,
  // A finished turn goes with its replies and wakes (ON DELETE CASCADE): the thread keeps the newest.
  agentThread: ((q, before, limit) => deleteBatch(q, 'agent_turns', 'finished_at < ?', [before], limit)) as Prune,
  modelCalls: ((q, before, limit) =>
    deleteBatch(q, 'agent_model_calls', 'day < ?', [new Date(before).toISOString().slice(0, 10)], limit)) as Prune,
};
