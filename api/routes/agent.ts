import { z } from 'zod';
import { conversationOf, getMessage, getStatus, getThread } from '../../src/agent/messages/agent.service.js';
import { refuseMessage, sendMessage } from '../../src/agent/messages/messages.service.js';
import { sessionLive } from '../../src/people/sessions.service.js';
import { NotFound, type AppError } from '../../src/errors.js';
import { webhooksRepository } from '../../src/webhooks/webhooks.repository.js';
import { defineRoute, type RouteContext, type RouteDef } from '../route-def.js';
import { queryInt } from '../schemas.js';
import {
  GetMessageResponse,
  PostMessageBody,
  PostMessageResponse,
  RequestIdParams,
  StatusResponse,
  ThreadResponse,
} from './agent.schemas.js';

/**
 * A bad body with `interrupt: false` while an earlier message of the token is unfinished: the 400 or
 * 409 also names that message (`notSent`, spec 4.3).
 */
export async function postMessageInvalid(error: AppError, body: unknown, ctx: RouteContext): Promise<AppError> {
  return refuseMessage(ctx.deps, { ...ctx.principal, tokenId: conversationOf(ctx.principal) }, error, body);
}

/** The agent. */
export const agentRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/api/v1/agent/messages',
    operationId: 'sendAgentMessage',
    summary: 'Message the agent; optionally wait for its reply',
    scope: 'agent:message',
    bucket: 'messages',
    body: PostMessageBody,
    onInvalidBody: postMessageInvalid,
    responses: {
      200: { description: 'With waitSeconds: the turn finished; `message` is terminal with its replies', schema: PostMessageResponse },
      202: {
        description: 'Queued (or deduplicated, or notSent); with waitSeconds, `message` is the last state seen',
        schema: PostMessageResponse,
      },
    },
    errors: [409],
  }).handle(async ({ body }, ctx) => {
    // Spec 4.3, every rule (the body's own rules are PostMessageBody's): one service call.
    const { accountId } = ctx.principal;
    const tokenId = conversationOf(ctx.principal);
    // A dashboard session waits while the session lasts; a token while it is not revoked.
    const session = ctx.session;
    const live = session ? () => sessionLive(ctx.deps.db, session) : undefined;
    const answer = await sendMessage(ctx.deps, { accountId, tokenId, actor: ctx.actor, live }, body, { signal: ctx.signal, log: ctx.log });
    return { status: answer.status, body: answer.body };
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/messages/{requestId}',
    operationId: 'getAgentMessage',
    summary: "One of this token's messages with its latest five reply bubbles",
    scope: 'agent:message',
    bucket: 'reads',
    params: RequestIdParams,
    responses: { 200: { description: 'The message', schema: GetMessageResponse } },
  }).handle(async ({ params }, ctx) => {
    const message = await getMessage(ctx.deps.db, ctx.principal.accountId, conversationOf(ctx.principal), params.requestId);
    if (!message) throw new NotFound();
    return { body: { message } };
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/thread',
    operationId: 'getAgentThread',
    summary: "This token's thread, newest first",
    scope: 'agent:message',
    bucket: 'reads',
    query: z.object({ limit: queryInt(1, 100, 50) }),
    responses: { 200: { description: 'Thread items', schema: ThreadResponse } },
  }).handle(async ({ query }, ctx) => ({
    body: { items: await getThread(ctx.deps.db, ctx.principal.accountId, conversationOf(ctx.principal), query.limit ?? 50) },
  })),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/status',
    operationId: 'getAgentStatus',
    summary: "The agent's status: sandbox, running, last activity, pending wakes",
    scope: 'results:read',
    bucket: 'reads',
    responses: { 200: { description: 'Agent status', schema: StatusResponse } },
  }).handle(async (_input, ctx) => ({
    // Events accepted at a hook URL and not handed to the agent yet count as its work waiting.
    body: {
      status: await getStatus(ctx.deps.db, ctx.principal.accountId, ctx.deps.config.agent.limits.modelCallsPerDay, (accountId, since) =>
        webhooksRepository(ctx.deps.db).waitingForAgent(accountId, since),
      ),
    },
  })),
];
