import { agentTurnProcessor } from './agent-turns/agent-turn.processor.js';
import type { Processor } from './create-worker.js';
import { CARD_TIMER_PROCESSORS } from './card-timers/card-timers.processors.js';
import { MAIL_PROCESSORS } from './mail-sends/mail-sends.processors.js';
import { INBOUND_PROCESSORS } from './inbound-mail/inbound-mail.processors.js';
import { sweepProcessor } from './maintenance/sweep.processor.js';
import { measurementAggregateProcessor } from './maintenance/measurement-aggregate.processor.js';
import { webhookEventProcessor } from './webhook-events/webhook-event.processor.js';
import { workflowAdvanceProcessor, workflowRunProcessor } from './workflow-runs/workflow-run.processor.js';

/** Every processor, one per job in src/jobs/catalog.ts. Features add theirs here. */
export const PROCESSORS: Processor[] = [
  agentTurnProcessor,
  sweepProcessor,
  webhookEventProcessor,
  ...CARD_TIMER_PROCESSORS,
  ...MAIL_PROCESSORS,
  workflowRunProcessor,
  workflowAdvanceProcessor,
  ...INBOUND_PROCESSORS,
  measurementAggregateProcessor,
];
