import { agentTurn } from './agent-turn.job.js';
import { maintenanceSweep } from './maintenance-sweep.job.js';
import { measurementAggregate } from './measurement-aggregate.job.js';
import type { JobDef } from './registry.js';
import { cardAutoResolve } from './card-auto-resolve.job.js';
import { cardRevise } from './card-revise.job.js';
import { cardRevisionReturn } from './card-revision-return.job.js';
import { cardSweep } from './card-sweep.job.js';
import { cardWake } from './card-wake.job.js';
import { mailReconcile } from './mail-reconcile.job.js';
import { mailSweep } from './mail-sweep.job.js';
import { sequenceStep } from './sequence-step.job.js';
import { webhookEvent } from './webhook-event.job.js';
import { inboundParse } from './inbound-parse.job.js';
import { inboundSweep } from './inbound-sweep.job.js';
import { providerPoll, providerPollSweep } from './provider-poll.job.js';
import { workflowAdvance, workflowRun } from './workflow-run.job.js';

/**
 * The job catalog: every job the pools run. Each feature adds its `<name>.job.ts` here; a pool's
 * worker refuses to start unless each of its queue's jobs has exactly one processor.
 */
export const JOBS: JobDef[] = [
  agentTurn,
  maintenanceSweep,
  webhookEvent,
  cardAutoResolve,
  cardWake,
  cardRevise,
  cardRevisionReturn,
  cardSweep,
  mailReconcile,
  mailSweep,
  sequenceStep,
  workflowRun,
  workflowAdvance,
  inboundParse,
  inboundSweep,
  measurementAggregate,
  providerPoll,
  providerPollSweep,
];
