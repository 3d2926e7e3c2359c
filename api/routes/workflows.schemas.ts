import { z } from 'zod';
import { NOT_BLANK, queryInt } from '../schemas.js';

const Gate = z.object({ on: z.literal(true, { error: 'must be true' }), label: z.string().min(1).max(80).optional() }).strict();

const MAX_DETAIL_LINES = 8;
const details = z
  .string()
  .max(2_000)
  .refine((s) => s.split(/\r\n|\r|\n/).length <= MAX_DETAIL_LINES, `must be at most ${MAX_DETAIL_LINES} lines`)
  // The same rule for a validating gateway: at most 7 line breaks (\r\n, \r or \n).
  .meta({ pattern: `^[^\\r\\n]*(?:(?:\\r\\n|\\r|\\n)[^\\r\\n]*){0,${MAX_DETAIL_LINES - 1}}$` });

const stepShape = {
  title: z.string().trim().min(1).max(200).meta(NOT_BLANK),
  details: details.optional(),
  gate: Gate.optional(),
};

/** On PATCH a step sent back with its `id` keeps its run history; an id that is not one of the workflow's is 409. */
const StepInput = z.object({ id: z.string().min(1).max(64).optional(), ...stepShape }).strict();

/**
 * On create no id names a step yet: any id is 409 `rejected` (leave it out), so the document sets no
 * rule on it a gateway would answer 400 for.
 */
const NewStepInput = z
  .object({
    id: z.string().meta({ description: 'Leave out: a new workflow has no steps to keep (any id is 409)' }).optional(),
    ...stepShape,
  })
  .strict();

const fields = {
  name: z.string().trim().min(1).max(120).meta(NOT_BLANK),
  scheduleText: z.string().trim().min(1).max(200).meta(NOT_BLANK),
  steps: z.array(StepInput).min(1).max(25),
  description: z.string().max(240),
  deliverTo: z.string().min(1).max(120),
};

export const CreateWorkflowBody = z
  .object({
    ...fields,
    steps: z.array(NewStepInput).min(1).max(25),
    description: fields.description.optional(),
    deliverTo: fields.deliverTo.optional(),
  })
  .strict()
  .meta({ id: 'CreateWorkflow' });

export const PatchWorkflowBody = z
  .object({
    name: fields.name.optional(),
    scheduleText: fields.scheduleText.optional(),
    steps: fields.steps.optional(),
    description: fields.description.nullable().optional(),
    deliverTo: fields.deliverTo.nullable().optional(),
    status: z.enum(['live', 'paused']).optional(),
  })
  .strict()
  .meta({ id: 'PatchWorkflow' });

export const RunsQuery = z.object({ limit: queryInt(1, 50, 10) });

const Step = z.object({
  id: z.string(),
  title: z.string(),
  details: z.string(),
  gate: z.object({ on: z.literal(true), label: z.string().optional() }).optional(),
});

export const Workflow = z
  .object({
    workflowId: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    status: z.enum(['live', 'paused']),
    scheduleText: z.string(),
    scheduleEcho: z.string().nullable(),
    scheduleError: z.string().nullable(),
    deliverTo: z.string().nullable(),
    nextRunAt: z.number().int().nullable(),
    version: z.number().int(),
    steps: z.array(Step),
    url: z.string(),
  })
  .meta({ id: 'Workflow' });

export const WorkflowResponse = z.object({ workflow: Workflow });
export const WorkflowsResponse = z.object({ workflows: z.array(Workflow) });
export const DeleteWorkflowResponse = z.object({ ok: z.literal(true), name: z.string() });

export const Run = z
  .object({
    runId: z.string(),
    workflowId: z.string(),
    status: z.enum(['running', 'waiting', 'done', 'failed', 'cancelled']),
    workflowVersion: z.number().int(),
    scheduledFor: z.number().int(),
    startedAt: z.number().int(),
    finishedAt: z.number().int().nullable(),
    steps: z.array(
      z.object({
        stepId: z.string(),
        title: z.string(),
        outcome: z.enum(['pending', 'running', 'done', 'failed', 'skipped', 'waiting_for_gate']),
        reason: z.string().optional(),
        turnId: z.string().optional(),
        cardId: z.string().optional(),
        at: z.number().int().optional(),
      }),
    ),
    summary: z.string().nullable(),
    deliveredTo: z.string().nullable(),
  })
  .meta({ id: 'WorkflowRun' });

export const RunsResponse = z.object({ runs: z.array(Run) });
