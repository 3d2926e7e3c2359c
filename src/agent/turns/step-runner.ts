import type { Runner } from '../../db.js';
import type { Deps } from '../../deps.js';
import { turnCarriesOutsideData } from '../../review/outside-data.js';
import type { Turn } from '../core/agent.types.js';
import type { ToolCall, ToolResult } from '../core/brain.js';
import { threadedCall } from '../replies/reply-thread.js';
import type { AgentDoors } from '../tools/tool.js';
import { queueTurn } from '../core/drain.js';
import { turnSteps, type StepAt } from './turn-steps.repository.js';

/** Where one call sits in its turn, and the round's proposal when it is the round's first step. */
export type StepPlace = Omit<StepAt, 'result'>;

/**
 * Runs one tool call as one step: its effect and its step record commit together, so a worker killed
 * at any point leaves either both or neither (docs/decisions/agent.md, "Agent turns: crash recovery"). A
 * reply's bubble and record are one statement on the turn's connection; any other tool runs in a
 * transaction that also writes the record.
 */
export async function runStep(
  deps: Deps,
  conn: Runner,
  turn: Turn,
  place: StepPlace,
  proposed: ToolCall,
  doors: AgentDoors,
): Promise<ToolResult> {
  // A follow-up to the person whose reply woke the agent threads under that reply (reply-thread.ts).
  const call = threadedCall(turn.data, proposed);
  const env = { accountId: turn.accountId, turnId: turn.id, fromOutside: turnCarriesOutsideData(turn), config: deps.config, doors };
  if (call.name === 'reply') {
    let recorded = false;
    const result = await doors.tools.execute(call, {
      ...env,
      db: deps.db,
      onReply: async (text) => {
        // What the registry answers for a reply that was sent.
        const sent: ToolResult = { id: call.id, name: call.name, ok: true, result: 'sent' };
        await turnSteps.reply(conn, turn.accountId, turn.id, { ...place, result: sent }, text, Date.now());
        recorded = true;
      },
    });
    // A refused reply (bad arguments) had no effect; its record keeps the transcript whole.
    if (!recorded) await turnSteps.record(conn, turn.accountId, turn.id, { ...place, result });
    return result;
  }
  const wakes: Turn[] = [];
  const result = await deps.db.transaction(async (trx) => {
    const result = await doors.tools.execute(call, {
      ...env,
      db: trx,
      onReply: () => Promise.reject(new Error('only the reply tool sends bubbles')),
      onWake: (wake) => wakes.push(wake),
    });
    await turnSteps.record(trx, turn.accountId, turn.id, { ...place, result });
    return result;
  });
  // A scheduled wake's drain job, delayed to its time, once the step that made it committed.
  for (const wake of wakes) await queueTurn(deps, wake);
  return result;
}
