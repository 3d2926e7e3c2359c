import { z } from 'zod';
import {
  dispatchTurn,
  getMessage,
  getStatus,
  getThread,
  isTerminal,
  messageView,
  recordTurn,
  waitForMessage,
  watchTurn,
  type Recorded,
} from '../../src/agent/agent.service.js';
import type { Turn } from '../../src/agent/agent.types.js';
import { settleAuditStatus } from '../../src/audit/audit.service.js';
import type { Queryable } from '../../src/db.js';
import { messageRequest } from '../../src/agent/message-request.js';
import { turnsRepository } from '../../src/agent/turns.repository.js';
import { BadRequest, NotFound, Rejected, type AppError } from '../../src/errors.js';
import { defineRoute, type ReplyTo, type RouteContext, type RouteDef } from '../route.js';
import { queryInt } from '../schemas.js';
import { GetMessageResponse, PostMessageBody, PostMessageResponse, RequestIdParams, StatusResponse, ThreadResponse } from './agent.schemas.js';

/** Serializes one token's message writes (dedupe and the `interrupt: false` check) across API processes. */
const TOKEN_LOCK_NAMESPACE = 7302;

class NotSentBadRequest extends BadRequest {
  constructor(
    sentence: string,
    private readonly more: Record<string, unknown>,
  ) {
    super(sentence);
  }
  override extra() {
    return this.more;
  }
}

/** A 400 or 409 that also names the earlier unfinished request (spec 4.3, `interrupt: false`). */
function withNotSent(error: AppError, earlier: Record<string, unknown>): AppError {
  if (error instanceof Rejected) return new Rejected(error.message, { ...earlier, reason: error.message });
  return new NotSentBadRequest(error.error, earlier);
}

async function unfinishedNewest(ctx: RouteContext): Promise<Turn | null> {
  const newest = await turnsRepository(ctx.deps.db).newestOfToken(ctx.principal.accountId, ctx.principal.tokenId);
  return newest && !isTerminal(newest.status) ? newest : null;
}

type Outcome = { kind: 'new'; recorded: Recorded } | { kind: 'dedup' | 'notSent'; turn: Turn };

/**
 * A bad body with `interrupt: false` while an earlier message of the token is unfinished: the 400 or
 * 409 also names that message (`notSent`, spec 4.3).
 */
export async function postMessageInvalid(error: AppError, body: unknown, ctx: RouteContext): Promise<AppError> {
  const holdIfBusy = typeof body === 'object' && body !== null && (body as Record<string, unknown>).interrupt === false;
  const earlier = holdIfBusy ? await unfinishedNewest(ctx) : null;
  if (!earlier) return error;
  return withNotSent(error, { notSent: true, requestId: earlier.id, message: await messageView(ctx.deps.db, earlier) });
}

/** POST /agent/messages: spec 4.3, every rule (the body's own rules are PostMessageBody's). */
export async function postMessage(input: { body: z.output<typeof PostMessageBody> }, ctx: RouteContext): Promise<ReplyTo<typeof messageResponses>> {
  const { deps, principal } = ctx;
  const req = messageRequest(input.body);
  const turnInput = {
    accountId: principal.accountId,
    kind: 'message' as const,
    origin: 'api',
    tokenId: principal.tokenId,
    clientRequestId: req.clientRequestId,
    text: req.text,
    mode: req.mode,
  };
  const audit = { actor: ctx.actor.actor, tokenId: ctx.actor.tokenId, tokenLabel: ctx.actor.tokenLabel, method: ctx.actor.method, route: ctx.actor.route, status: 202 };
  const record = async (q: Queryable): Promise<Outcome> => {
    const recorded = await recordTurn(q, deps.config, turnInput, { audit });
    return recorded.created ? { kind: 'new', recorded } : { kind: 'dedup', turn: recorded.turn };
  };
  // A plain message is one statement (turn, interrupt flags, activity and audit row together).
  // Only the dedupe lookup and the `interrupt: false` check need the token serialized, in a transaction.
  const outcome =
    !req.clientRequestId && !req.holdIfBusy
      ? await record(deps.db)
      : await deps.db.transaction(async (trx): Promise<Outcome> => {
          await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [TOKEN_LOCK_NAMESPACE, principal.tokenId]);
          const repo = turnsRepository(trx);
          if (req.clientRequestId) {
            const existing = await repo.findByClientRequestId(principal.tokenId, req.clientRequestId);
            if (existing) {
              if (existing.text !== req.text) {
                throw new Rejected(`clientRequestId ${req.clientRequestId} was already used with a different text; use a new clientRequestId`);
              }
              return { kind: 'dedup', turn: existing };
            }
          }
          if (req.holdIfBusy) {
            const newest = await repo.newestOfToken(principal.accountId, principal.tokenId);
            if (newest && !isTerminal(newest.status)) return { kind: 'notSent', turn: newest };
          }
          return record(trx);
        });

  if (outcome.kind === 'notSent') {
    const body: z.input<typeof PostMessageResponse> = {
      requestId: outcome.turn.id,
      deduplicated: false,
      notSent: true,
      message: await messageView(deps.db, outcome.turn),
    };
    return { status: 202, body };
  }
  const turn = outcome.kind === 'new' ? outcome.recorded.turn : outcome.turn;
  const base = { requestId: turn.id, deduplicated: outcome.kind === 'dedup' };
  // Subscribe before the turn is queued, so a fast turn's notice cannot slip past the wait.
  const watch = req.waitSeconds === null ? undefined : watchTurn(deps, turn.id);
  if (outcome.kind === 'new') await dispatchTurn(deps, outcome.recorded);
  if (req.waitSeconds === null || !watch) return { status: 202, body: base };

  const end = await waitForMessage(
    deps,
    { accountId: principal.accountId, tokenId: principal.tokenId, turnId: turn.id },
    req.waitSeconds,
    ctx.signal,
    { watch, fresh: outcome.kind === 'new' ? turn : undefined },
  );
  if (end.terminal) {
    if (outcome.kind === 'new') await answeredNow(ctx, turn.id);
    return { status: 200, body: { ...base, message: end.message } };
  }
  if (end.ended === 'unauthorized') return { status: 202, body: { ...base, waitEnded: 'unauthorized' } };
  const body: z.input<typeof PostMessageResponse> = {
    ...base,
    ...(end.message ? { message: end.message } : {}),
    ...(end.ended ? { waitEnded: end.ended } : {}),
  };
  return { status: 202, body };
}

/**
 * The message's audit row was written with it, as 202; a request that waited answers 200, and the row
 * says so. The answer stands if this write fails (the reply is done): the row then keeps 202.
 */
async function answeredNow(ctx: RouteContext, turnId: string): Promise<void> {
  try {
    await settleAuditStatus(ctx.deps.db, ctx.actor, turnId, 200);
  } catch (err) {
    ctx.log.warn({ turnId, err: (err as Error).message }, 'audit status of a waited message not updated to 200');
  }
}

const messageResponses = {
  200: { description: 'With waitSeconds: the turn finished; `message` is terminal with its replies', schema: PostMessageResponse },
  202: { description: 'Queued (or deduplicated, or notSent); with waitSeconds, `message` is the last state seen', schema: PostMessageResponse },
};

/** The agent (issue 3). */
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
    responses: messageResponses,
    errors: [409],
  }).handle(postMessage),
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
    const message = await getMessage(ctx.deps.db, ctx.principal.accountId, ctx.principal.tokenId, params.requestId);
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
    body: { items: await getThread(ctx.deps.db, ctx.principal.accountId, ctx.principal.tokenId, query.limit ?? 50) },
  })),
  defineRoute({
    method: 'get',
    path: '/api/v1/agent/status',
    operationId: 'getAgentStatus',
    summary: "The agent's status: sandbox, running, last activity, pending wakes",
    scope: 'results:read',
    bucket: 'reads',
    responses: { 200: { description: 'Agent status', schema: StatusResponse } },
  }).handle(async (_input, ctx) => ({ body: { status: await getStatus(ctx.deps.db, ctx.principal.accountId) } })),
];
