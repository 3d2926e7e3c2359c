import { z } from 'zod';
import { newId } from '../../ids.js';
import { addCard } from '../../review/cards/doors.js';
import { cardShape } from '../../review/file-work.service.js';
import { defineTool, text, type WorkflowProposal } from './tool.js';

const input = z.object({
  name: text(120),
  scheduleText: text(200),
  description: z.string().max(240).optional(),
  steps: z
    .array(z.object({ title: text(200), details: z.string().max(2_000).optional() }))
    .min(1)
    .max(25),
}) satisfies z.ZodType<WorkflowProposal>;

/**
 * A recurring workflow, recorded paused through the workflows' door the context carries (workflows stand above the
 * agent), and a card to approve it: it runs only once a person accepts it (resume, or approving this card).
 */
export const proposeWorkflow = defineTool({
  name: 'propose_workflow',
  description: 'Propose a recurring workflow; it waits for approval as a card.',
  input,
  async handler(args, ctx) {
    const workflow = await ctx.doors.proposeWorkflow(ctx.db, ctx.accountId, args);
    const card = await addCard(ctx.db, {
      id: newId('card'),
      accountId: ctx.accountId,
      kind: 'approval',
      sourceType: 'workflow_proposal',
      title: `Workflow: ${args.name}`,
      summary: `${args.name} (${workflow.scheduleEcho ?? args.scheduleText})`,
      prompt: 'Approve to make this workflow live.',
      payload: { workflowId: workflow.id, workflow: args },
      turnId: ctx.turnId,
      fromOutside: ctx.fromOutside,
      ...cardShape('approval', 'workflow_proposal'),
    });
    return `workflow ${workflow.id} is proposed (paused) and waits for approval as card ${card.id}`;
  },
});
