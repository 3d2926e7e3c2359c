import { agentTurnDoors } from '../agent/core/doors.js';
import type { Queryable } from '../db.js';
import { leadTouchedBetween } from '../leads/doors.js';
import { firstCardOfTurn } from '../review/cards/doors.js';
import type { AgentOutcome } from './webhooks.types.js';

/** For a failed turn that recorded no reason (older rows): still says it failed, not nothing. */
export const FAILED_WITHOUT_REASON = 'the agent failed this turn (no reason was recorded)';

/**
 * What the agent made of a delivery's turn: the card it put in the review queue, the lead it recorded
 * or researched, its note (first reply bubble; for a failed turn, why it failed). Cards and notes carry the turn id. Leads do not, but
 * an account runs one turn at a time under its lock, so a lead created or researched between the
 * turn's start and finish is that turn's.
 */
export async function agentOutcome(q: Queryable, accountId: string, turnId: string | null, now = Date.now()): Promise<AgentOutcome> {
  const none: AgentOutcome = { made: 'nothing yet', turn: null, lead: null, card: null, note: null };
  if (!turnId) return none;
  const turns = agentTurnDoors(q);
  const turn = await turns.window(accountId, turnId);
  if (!turn) return none;
  const [card, note, lead] = await Promise.all([
    firstCardOfTurn(q, accountId, turnId),
    turns.firstReply(accountId, turnId),
    turn.started_at === null ? undefined : leadTouchedBetween(q, accountId, turn.started_at, turn.finished_at ?? now),
  ]);
  const out: AgentOutcome = {
    made: card ? 'card' : lead ? 'lead' : note ? 'note' : 'nothing yet',
    turn: turn.status,
    lead: lead ? { id: lead.id, domain: lead.domain } : null,
    card,
    // An operator looking at a failed turn needs the reason more than a partial reply.
    note: turn.status === 'failed' ? (turn.failure ?? FAILED_WITHOUT_REASON) : (note?.text ?? null),
  };
  return out;
}
