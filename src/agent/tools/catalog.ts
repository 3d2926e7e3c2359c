import { block } from './block.js';
import { createCard } from './create-card.js';
import { proposeWorkflow } from './propose-workflow.js';
import { remember } from './remember.js';
import { reply } from './reply.js';
import { ship } from './ship.js';
import { scheduleWake } from './schedule-wake.js';
import { toolCatalog } from './tool.js';
import { upsertLead } from './upsert-lead.js';

/**
 * The agent's own tools, one file each. The experiments add theirs (src/agent/experiments/tools.ts); the process that
 * runs turns assembles both into the one registry (`toolRegistry`, workers/agent-turns.ts).
 */
export const AGENT_TOOLS = toolCatalog({
  reply,
  create_card: createCard,
  ship,
  upsert_lead: upsertLead,
  propose_workflow: proposeWorkflow,
  remember,
  block,
  schedule_wake: scheduleWake,
});
