import { adminActor, type Actor } from '../audit/audit.service.js';
import { NotFound } from '../errors.js';
import type { CardDecided, EventDeps, EventHandlers } from '../events/event-map.js';
import { continueAfterGate } from './runs.service.js';
import { deleteWorkflow, resumeWorkflow } from './workflows.service.js';

/**
 * The workflows' follow-up of `card.decided` (registered by the process that delivers events): a workflow gate
 * continues (approve) or cancels (dismiss) its run; an agent-proposed workflow is accepted (approve: it goes live)
 * or dropped (dismiss). Other cards are not the workflows' business. Each step is idempotent, so a redelivered
 * event changes nothing twice.
 */
export function registerWorkflowFollowUps(handlers: EventHandlers): void {
  handlers.on('card.decided', 'workflows', followDecision);
}

async function followDecision(deps: EventDeps, e: CardDecided): Promise<void> {
  const approved = e.decision === 'approve';
  if (!approved && e.decision !== 'dismiss') return;
  if (e.sourceType === 'workflow_gate') {
    await continueAfterGate(deps, e.cardId, approved);
    return;
  }
  const workflowId = e.sourceType === 'workflow_proposal' ? e.payload.workflowId : undefined;
  if (typeof workflowId !== 'string') return;
  // The person's token audits the change; a decision no person made is audited as the system's.
  const actor: Actor = e.actor ?? adminActor(e.accountId, `card.decided by ${e.decidedBy}`);
  try {
    if (approved) await resumeWorkflow(deps, actor, workflowId);
    else await deleteWorkflow(deps, actor, workflowId);
  } catch (err) {
    // Already deleted (by someone else, or by this follow-up's earlier run): nothing left to accept or drop.
    if (!(err instanceof NotFound)) throw err;
  }
}
