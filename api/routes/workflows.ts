import type { z } from 'zod';
import {
  createWorkflow,
  deleteWorkflow,
  listRuns,
  listWorkflows,
  pauseWorkflow,
  resumeWorkflow,
  updateWorkflow,
} from '../../src/workflows/workflows.service.js';
import type { Reply, RouteContext } from '../route.js';
import type { CreateWorkflowBody, PatchWorkflowBody, RunsQuery } from './workflows.schemas.js';

type Id = { params: { id: string } };

export async function getWorkflows(_input: unknown, ctx: RouteContext): Promise<Reply> {
  return { body: { workflows: await listWorkflows(ctx.deps.db, ctx.deps.config.baseUrl, ctx.principal.accountId) } };
}

export async function postWorkflow(input: { body: z.output<typeof CreateWorkflowBody> }, ctx: RouteContext): Promise<Reply> {
  return { status: 201, body: { workflow: await createWorkflow(ctx.deps, ctx.actor, input.body) } };
}

export async function patchWorkflow(input: Id & { body: z.output<typeof PatchWorkflowBody> }, ctx: RouteContext): Promise<Reply> {
  return { body: { workflow: await updateWorkflow(ctx.deps, ctx.actor, input.params.id, input.body) } };
}

export async function removeWorkflow(input: Id, ctx: RouteContext): Promise<Reply> {
  return { body: await deleteWorkflow(ctx.deps, ctx.actor, input.params.id) };
}

export async function postPause(input: Id, ctx: RouteContext): Promise<Reply> {
  return { body: { workflow: await pauseWorkflow(ctx.deps, ctx.actor, input.params.id) } };
}

export async function postResume(input: Id, ctx: RouteContext): Promise<Reply> {
  return { body: { workflow: await resumeWorkflow(ctx.deps, ctx.actor, input.params.id) } };
}

export async function getRuns(input: Id & { query: z.output<typeof RunsQuery> }, ctx: RouteContext): Promise<Reply> {
  return { body: { runs: await listRuns(ctx.deps.db, ctx.principal.accountId, input.params.id, input.query.limit ?? 10) } };
}
