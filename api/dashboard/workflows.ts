import { previewSchedule } from '../../src/workflows/workflows.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { SchedulePreviewQuery, SchedulePreviewReply } from './workflows.schemas.js';

/**
 * The workflows page's one route of its own (docs/dashboard.md, "Workflows"): what a schedule in plain words
 * would do before the workflow is saved, read by the workflows service's own parser. Everything else the page
 * does is the /api/v1 workflows routes under /dashboard/api/v1.
 */
export const workflowRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/workflows/schedule-preview',
    operationId: 'previewWorkflowSchedule',
    summary: "A schedule in plain words read as a workflow's would be: its echo, or why it cannot be read, and the next five runs",
    auth: 'session',
    scope: 'results:read',
    bucket: 'reads',
    query: SchedulePreviewQuery,
    responses: { 200: { description: 'The reading; nothing is saved', schema: SchedulePreviewReply } },
  }).handle(async ({ query }, ctx) => ({ body: await previewSchedule(ctx.deps.db, ctx.principal.accountId, query.text) })),
];
