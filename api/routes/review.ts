import type { z } from 'zod';
import { sendCard } from '../../src/review/shipping.service.js';
import { onCardDecided } from '../../src/workflows/card-decisions.js';
import { answerCard, dismissCard, getCardJson, listCards, requestChanges, snoozeCard } from '../../src/review/review.service.js';
import type { Reply, RouteContext } from '../route.js';
import type { IdParams } from '../schemas.js';
import type { AnswerBody, DismissBody, RequestChangesBody, ReviewListQuery, SendBody, SnoozeBody } from './review.schemas.js';

type Id = { params: z.output<typeof IdParams> };

/** GET /review: the queue, priority band then newest first; snoozed cards stay hidden until their time. */
export async function getReview({ query }: { query: z.output<typeof ReviewListQuery> }, ctx: RouteContext): Promise<Reply> {
  const items = await listCards(ctx.deps, ctx.principal.accountId, { status: query.status, limit: query.limit ?? 50 }, ctx.beforeWrite);
  return { json: `{"items":${items}}` };
}

/** GET /review/{id}: any status, full payload; the card's JSON is the queue's rendering of it. */
export async function getReviewCard({ params }: Id, ctx: RouteContext): Promise<Reply> {
  return { json: `{"item":${await getCardJson(ctx.deps, ctx.principal.accountId, params.id, ctx.beforeWrite)}}` };
}

export async function postAnswer({ params, body }: Id & { body: z.output<typeof AnswerBody> }, ctx: RouteContext): Promise<Reply> {
  return { body: await answerCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body, onCardDecided(ctx.deps, ctx.actor)) };
}

/** POST /review/{id}/send: 200 once the provider accepted; 503 with Retry-After when it is not settled. */
export async function postSend({ params, body }: Id & { body: z.output<typeof SendBody> }, ctx: RouteContext): Promise<Reply> {
  return { body: await sendCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, { body: body.body, decidedBy: 'person' }) };
}

export async function postRequestChanges({ params, body }: Id & { body: z.output<typeof RequestChangesBody> }, ctx: RouteContext): Promise<Reply> {
  return { body: await requestChanges(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body.text) };
}

export async function postSnooze({ params, body }: Id & { body: z.output<typeof SnoozeBody> }, ctx: RouteContext): Promise<Reply> {
  return { body: await snoozeCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body.until) };
}

export async function postDismiss({ params, body }: Id & { body: z.output<typeof DismissBody> }, ctx: RouteContext): Promise<Reply> {
  return { body: await dismissCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body.reason, onCardDecided(ctx.deps, ctx.actor)) };
}
