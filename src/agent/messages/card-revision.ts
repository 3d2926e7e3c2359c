import { cardRevisionReturn } from '../../jobs/card-timers.js';
import { enqueue } from '../../jobs/registry.js';
import { cardInRevision, cardToRevise, claimRevision, returnRevisedCard, revisionsDue } from '../../review/revisions.service.js';
import { dispatchTurn, isTerminal, recordTurn, type AgentDeps } from './agent.service.js';
import { turnsRepository } from '../core/turns.repository.js';

/**
 * The agent's side of a revision: the card changes only through src/review/revisions.service.ts, and
 * the turn is recorded, dispatched and read here (review stands below the agent and starts no turn).
 */

class ClaimLost extends Error {}
export class RevisionStillRunning extends Error {}

/**
 * Revision kick-off: records a `revision` turn (the agent's one turn entry, in this transaction) and
 * claims the card for it in one commit, then dispatches the turn. A second run finds the card claimed.
 */
export async function startRevision(deps: AgentDeps, accountId: string, cardId: string, version: number): Promise<string | null> {
  const card = await cardToRevise(deps.db, accountId, cardId, version);
  if (!card) return null;
  const recorded = await deps.db
    .transaction(async (trx) => {
      const rec = await recordTurn(trx, deps.config, {
        accountId,
        kind: 'revision',
        origin: 'review',
        text:
          `Revise review card ${card.id} ("${card.title}"). The person asked for these changes: ${card.requestedChanges ?? ''}. ` +
          'Produce the revised version with the same tool that made it (same kind of work); it replaces the card under review.',
        data: {
          label: 'review card to revise',
          content: {
            cardId: card.id,
            kind: card.kind,
            sourceType: card.sourceType,
            title: card.title,
            summary: card.summary,
            payload: card.payload,
            requestedChanges: card.requestedChanges,
          },
        },
        mode: 'queue',
      });
      if (!(await claimRevision(trx, accountId, cardId, version, rec.turn.id))) throw new ClaimLost();
      return rec;
    })
    .catch((err) => {
      if (err instanceof ClaimLost) return null;
      throw err;
    });
  if (!recorded) return null;
  await dispatchTurn(deps, recorded);
  await enqueue(deps.queues, cardRevisionReturn, { accountId, cardId, turnId: recorded.turn.id }, { version, delay: 1_000 }).catch(
    (err: Error) => deps.logger.warn({ cardId, err: err.message }, 'revision return not queued; the card sweep will return it'),
  );
  return recorded.turn.id;
}

/** Once the revision turn is over, the card returns to `pending` as its next version (review's `returnRevisedCard`). */
export async function returnRevision(deps: Pick<AgentDeps, 'db'>, accountId: string, cardId: string, turnId: string): Promise<boolean> {
  const card = await cardInRevision(deps.db, accountId, cardId, turnId);
  if (!card) return false;
  const turn = await turnsRepository(deps.db).find(accountId, turnId);
  if (turn && !isTerminal(turn.status)) throw new RevisionStillRunning(`revision turn ${turnId} is still ${turn.status}`);
  const replies = await turnsRepository(deps.db).latestReplies(turnId, 5);
  const agentNote = replies.map((r) => r.text).join('\n') || null;
  return returnRevisedCard(deps, card, { turnId, turnStatus: turn?.status ?? 'missing', agentNote });
}

/** The card sweep's revision part: a revision whose timer passed is started, or returned once its turn ended. */
export async function sweepRevisions(deps: AgentDeps, limit = 200): Promise<number> {
  let n = 0;
  for (const c of await revisionsDue(deps.db, limit)) {
    if (!c.revisionTurnId) {
      if (await startRevision(deps, c.accountId, c.id, c.version)) n++;
    } else if (await returnRevision(deps, c.accountId, c.id, c.revisionTurnId).catch(() => false)) n++;
  }
  return n;
}
