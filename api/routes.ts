import { z } from 'zod';
import { queryInt } from './schemas.js';
import { defineRoute, type RouteDef } from './route.js';
import { getAgentMessage, getAgentStatus, getAgentThread, postMessage } from './routes/agent.js';
import {
  GetMessageResponse,
  PostMessageBody,
  PostMessageResponse,
  RequestIdParams,
  StatusResponse,
  ThreadResponse,
} from './routes/agent.schemas.js';
import { getMe } from './routes/me.js';
import { MeResponse } from './routes/me.schemas.js';
import { getRuns, getWorkflows, patchWorkflow, postPause, postResume, postWorkflow, removeWorkflow } from './routes/workflows.js';
import {
  CreateWorkflowBody,
  DeleteWorkflowResponse,
  PatchWorkflowBody,
  RunsQuery,
  RunsResponse,
  WorkflowResponse,
  WorkflowsResponse,
} from './routes/workflows.schemas.js';
import { getBlocklist, postBlocklist } from './routes/blocklist.js';
import { BlocklistAddBody, BlocklistAddResponse, BlocklistPage, BlocklistQuery } from './routes/blocklist.schemas.js';
import { getLeadById, getLeads, patchLead } from './routes/leads.js';
import { LeadLabelsBody, LeadLabelsResponse, LeadResponse, LeadsPage, LeadsQuery } from './routes/leads.schemas.js';
import { getResultsRoute } from './routes/results.js';
import { ResultsQuery, ResultsResponse } from './routes/results.schemas.js';
import { IdParams } from './schemas.js';

/**
 * The route table: each route's method, path, scope, rate bucket, schemas and handler, declared once.
 * The router, the scope check, the limiter and /openapi.json all read it.
 *
 * Buckets: GETs count as `reads`, other verbs as `writes`, POST /agent/messages as `messages`;
 * every request also counts toward the account bucket.
 */
export const routes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/me',
    summary: 'The calling token, its account and its rate limits',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The token', schema: MeResponse } },
    handler: getMe,
  }),
  // Leads, block list and results (issue 7).
  defineRoute({
    method: 'get',
    path: '/api/v1/leads',
    summary: 'Leads, newest created first; follow nextCursor until null',
    scope: 'leads:read',
    bucket: 'reads',
    query: LeadsQuery,
    responses: { 200: { description: 'One page of leads (list form)', schema: LeadsPage } },
    handler: getLeads,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/leads/{id}',
    summary: 'One lead in detail form: draft, research, contacts',
    scope: 'leads:read',
    bucket: 'reads',
    params: IdParams,
    responses: { 200: { description: 'The lead', schema: LeadResponse } },
    handler: getLeadById,
  }),
  defineRoute({
    method: 'patch',
    path: '/api/v1/leads/{id}',
    summary: "Label a lead: vertical, archetype, tags (null clears)",
    scope: 'leads:write',
    bucket: 'writes',
    params: IdParams,
    body: LeadLabelsBody,
    responses: { 200: { description: 'The labels as stored', schema: LeadLabelsResponse } },
    handler: patchLead,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/blocklist',
    summary: 'The do-not-contact list, newest first',
    scope: 'leads:read',
    bucket: 'reads',
    query: BlocklistQuery,
    responses: { 200: { description: 'One page of entries', schema: BlocklistPage } },
    handler: getBlocklist,
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/blocklist',
    summary: 'Add up to 500 domains, emails or profile URLs (idempotent)',
    scope: 'leads:write',
    bucket: 'writes',
    body: BlocklistAddBody,
    responses: { 200: { description: 'How many were added, already listed, or unreadable', schema: BlocklistAddResponse } },
    handler: postBlocklist,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/results',
    summary: 'Per-channel scoreboard for a window and its baseline',
    scope: 'results:read',
    bucket: 'reads',
    query: ResultsQuery,
    responses: { 200: { description: 'The scoreboard', schema: ResultsResponse } },
    handler: getResultsRoute,
  }),
  // The agent (issue 3).
  defineRoute({
    method: 'post',
    path: '/api/v1/agent/messages',
    summary: 'Message the agent; optionally wait for its reply',
    scope: 'agent:message',
    bucket: 'messages',
    body: PostMessageBody,
    responses: {
      200: { description: 'With waitSeconds: the turn finished; `message` is terminal with its replies', schema: PostMessageResponse },
      202: { description: 'Queued (or deduplicated, or notSent); with waitSeconds, `message` is the last state seen', schema: PostMessageResponse },
    },
    errors: [409],
    handler: postMessage,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/messages/{requestId}',
    summary: "One of this token's messages with its latest five reply bubbles",
    scope: 'agent:message',
    bucket: 'reads',
    params: RequestIdParams,
    responses: { 200: { description: 'The message', schema: GetMessageResponse } },
    handler: getAgentMessage,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/thread',
    summary: "This token's thread, newest first",
    scope: 'agent:message',
    bucket: 'reads',
    query: z.object({ limit: queryInt(1, 100, 50) }),
    responses: { 200: { description: 'Thread items', schema: ThreadResponse } },
    handler: getAgentThread,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/status',
    summary: "The agent's status: sandbox, running, last activity, pending wakes",
    scope: 'results:read',
    bucket: 'reads',
    responses: { 200: { description: 'Agent status', schema: StatusResponse } },
    handler: getAgentStatus,
  }),
  // Workflows (issue 6).
  defineRoute({
    method: 'get',
    path: '/api/v1/workflows',
    summary: "The account's workflows",
    scope: 'results:read',
    bucket: 'reads',
    responses: { 200: { description: 'Workflows', schema: WorkflowsResponse } },
    handler: getWorkflows,
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/workflows',
    summary: 'Create a workflow; it is live at once and its schedule is read from plain words',
    scope: 'workflows:write',
    bucket: 'writes',
    body: CreateWorkflowBody,
    responses: { 201: { description: 'The live workflow', schema: WorkflowResponse } },
    errors: [409],
    handler: postWorkflow,
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/workflows/{id}/runs',
    summary: "A workflow's runs with per-step outcomes, newest first",
    scope: 'results:read',
    bucket: 'reads',
    params: IdParams,
    query: RunsQuery,
    responses: { 200: { description: 'Runs', schema: RunsResponse } },
    handler: getRuns,
  }),
  defineRoute({
    method: 'patch',
    path: '/api/v1/workflows/{id}',
    summary: 'Change a workflow (any create field, or status); steps replace the list',
    scope: 'workflows:write',
    bucket: 'writes',
    params: IdParams,
    body: PatchWorkflowBody,
    responses: { 200: { description: 'The workflow with its new version', schema: WorkflowResponse } },
    errors: [409],
    handler: patchWorkflow,
  }),
  defineRoute({
    method: 'delete',
    path: '/api/v1/workflows/{id}',
    summary: 'Delete a workflow and cancel its pending wake',
    scope: 'workflows:write',
    bucket: 'writes',
    params: IdParams,
    responses: { 200: { description: 'Deleted', schema: DeleteWorkflowResponse } },
    handler: removeWorkflow,
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/workflows/{id}/pause',
    summary: 'Pause a workflow (idempotent)',
    scope: 'workflows:write',
    bucket: 'writes',
    params: IdParams,
    responses: { 200: { description: 'The paused workflow', schema: WorkflowResponse } },
    handler: postPause,
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/workflows/{id}/resume',
    summary: 'Resume a workflow (idempotent); accepts an agent-proposed one',
    scope: 'workflows:write',
    bucket: 'writes',
    params: IdParams,
    responses: { 200: { description: 'The live workflow with its next run', schema: WorkflowResponse } },
    handler: postResume,
  }),
];
