import type { Actor } from '../audit/audit.service.js';
import { NotFound } from '../errors.js';
import type { AfterDecision } from '../review/review.service.js';
import { continueAfterGate } from './runs.service.js';
import { deleteWorkflow, resumeWorkflow, type WorkflowDeps } from './workflows.service.js';

/**
 * After a person's decision on a card committed (review's verbs call it, named by the API's handler):
 * a workflow gate continues (approve) or cancels (dismiss) its run; an agent-proposed workflow is
 * accepted (approve: it goes live) or dropped (dismiss). Other cards are not the workflows' business.
 * Each step is idempotent, so a retried request or a lost race changes nothing twice.
 */
export function onCardDecided(deps: WorkflowDeps, actor: Actor): AfterDecision {
  return (card, approved) => followDecision(deps, actor, card, approved);
}

async function followDecision(
  deps: WorkflowDeps,
  actor: Actor,
  card: { id: string; sourceType: string; payload: Record<string, unknown> },
  approved: boolean,
): Promise<void> {
  if (card.sourceType === 'workflow_gate') {
    await continueAfterGate(deps, card.id, approved);
    return;
  }
  const workflowId = card.sourceType === 'workflow_proposal' ? card.payload.workflowId : undefined;
  if (typeof workflowId !== 'string') return;
  try {
    if (approved) await resumeWorkflow(deps, actor, workflowId);
    else await deleteWorkflow(deps, actor, workflowId);
  } catch (err) {
    // Already deleted by someone else: nothing left to accept or drop.
    if (!(err instanceof NotFound)) throw err;
  }
}
