import type { z } from 'zod';
import { getMessage, getStatus, getThread } from '../../src/agent/agent.service.js';
import { refuseMessage, sendMessage } from '../../src/agent/messages.service.js';
import { NotFound, type AppError } from '../../src/errors.js';
import type { Reply, RouteContext } from '../route.js';
import type { PostMessageBody, RequestIdParams } from './agent.schemas.js';

/**
 * A bad body with `interrupt: false` while an earlier message of the token is unfinished: the 400 or
 * 409 also names that message (`notSent`, spec 4.3).
 */
export async function postMessageInvalid(error: AppError, body: unknown, ctx: RouteContext): Promise<AppError> {
  return refuseMessage(ctx.deps, ctx.principal, error, body);
}

/** POST /agent/messages: spec 4.3, every rule (the body's own rules are PostMessageBody's). */
export async function postMessage(input: { body: z.output<typeof PostMessageBody> }, ctx: RouteContext): Promise<Reply> {
  const { accountId, tokenId } = ctx.principal;
  const answer = await sendMessage(ctx.deps, { accountId, tokenId, actor: ctx.actor }, input.body, { signal: ctx.signal, log: ctx.log });
  return { status: answer.status, body: answer.body };
}

export async function getAgentMessage(input: { params: z.output<typeof RequestIdParams> }, ctx: RouteContext): Promise<Reply> {
  const message = await getMessage(ctx.deps.db, ctx.principal.accountId, ctx.principal.tokenId, input.params.requestId);
  if (!message) throw new NotFound();
  return { body: { message } };
}

export async function getAgentThread(input: { query: { limit?: number | undefined } }, ctx: RouteContext): Promise<Reply> {
  return { body: { items: await getThread(ctx.deps.db, ctx.principal.accountId, ctx.principal.tokenId, input.query.limit ?? 50) } };
}

export async function getAgentStatus(_input: unknown, ctx: RouteContext): Promise<Reply> {
  return { body: { status: await getStatus(ctx.deps.db, ctx.principal.accountId) } };
}
