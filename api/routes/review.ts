import { getCardJson } from '../../src/review/queue.service.js';
import { cachedQueuePage } from '../../src/review/queue-page-cache.js';
import { dismissCard, requestChanges, snoozeCard } from '../../src/review/review.service.js';
import { answerAndShip } from '../../src/shipping/after-approval.js';
import { heldRefusal } from '../../src/shipping/send-window-hold.js';
import { sendCard } from '../../src/shipping/ship-card.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { IdParams } from '../schemas.js';
import {
  AnswerBody,
  AnswerResponse,
  DismissBody,
  DismissResponse,
  OkResponse,
  RequestChangesBody,
  ReviewItemResponse,
  ReviewListQuery,
  ReviewListResponse,
  SendBody,
  SendResponse,
  SnoozeBody,
  SnoozeResponse,
} from './review.schemas.js';

/** Review queue. What follows a decision is the `card.decided` event's handlers' (docs/architecture.md, "Events"). */
export const reviewRoutes: RouteDef[] = [
  /**
   * Snoozed cards stay hidden until their time; the cards' JSON is rendered by Postgres, and the page is
   * served from this process's cache while the limiter says the account's queue has not changed.
   */
  defineRoute({
    method: 'get',
    path: '/api/v1/review',
    operationId: 'listReviewCards',
    summary: 'The review queue: pending and needs_revision cards, priority band then newest first',
    scope: 'review:read',
    bucket: 'reads',
    query: ReviewListQuery,
    responses: { 200: { description: 'Cards in the queue', schema: ReviewListResponse } },
  }).handle(async ({ query }, ctx) => {
    const q = { status: query.status, limit: query.limit ?? 50 };
    const cache = { pages: ctx.deps.limiter.pages, version: ctx.queueVersion };
    return { json: await cachedQueuePage(ctx.deps, ctx.principal.accountId, q, ctx.beforeWrite, cache) };
  }),
  /** The card's JSON is the queue's rendering of it. */
  defineRoute({
    method: 'get',
    path: '/api/v1/review/{id}',
    operationId: 'getReviewCard',
    summary: 'One card in any status, with its full payload',
    scope: 'review:read',
    bucket: 'reads',
    params: IdParams,
    responses: { 200: { description: 'The card', schema: ReviewItemResponse } },
  }).handle(async ({ params }, ctx) => ({
    json: `{"item":${await getCardJson(ctx.deps, ctx.principal.accountId, params.id, ctx.beforeWrite)}}`,
  })),
  defineRoute({
    method: 'post',
    path: '/api/v1/review/{id}/answer',
    operationId: 'answerReviewCard',
    stateRules: ["optionValues must be exactly one of the card's option values"],
    summary: 'Approve, answer or choose; the action must be in the card actions',
    scope: 'review:write',
    bucket: 'writes',
    params: IdParams,
    body: AnswerBody,
    responses: { 200: { description: 'Resolved', schema: AnswerResponse } },
    errors: [409],
  }).handle(async ({ params, body }, ctx) => ({
    body: await answerAndShip(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body),
  })),
  /** 200 once the provider accepted; 503 with Retry-After when it is not settled. */
  defineRoute({
    method: 'post',
    path: '/api/v1/review/{id}/send',
    operationId: 'sendReviewCard',
    stateRules: ['body is only for mail replies'],
    summary: 'Send a mail card once; 503 delivery_pending or unavailable carry Retry-After',
    scope: 'review:write',
    bucket: 'writes',
    params: IdParams,
    body: SendBody,
    responses: { 200: { description: 'The provider accepted the message', schema: SendResponse } },
    errors: [409],
  }).handle(async ({ params, body }, ctx) => {
    const sent = await sendCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, { body: body.body, decidedBy: 'person' });
    // Held for its send window: kept approved, not sent, so not a 200 (send-window-hold.ts heldRefusal).
    if (sent.status === 'held') throw heldRefusal(sent);
    return { body: sent };
  }),
  defineRoute({
    method: 'post',
    path: '/api/v1/review/{id}/request-changes',
    operationId: 'requestReviewCardChanges',
    summary: 'Ask the agent to revise the card; it returns to the queue as pending',
    scope: 'review:write',
    bucket: 'writes',
    params: IdParams,
    body: RequestChangesBody,
    responses: { 200: { description: 'The card needs revision', schema: OkResponse } },
    errors: [409],
  }).handle(async ({ params, body }, ctx) => ({
    body: await requestChanges(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body.text),
  })),
  defineRoute({
    method: 'post',
    path: '/api/v1/review/{id}/snooze',
    operationId: 'snoozeReviewCard',
    stateRules: ['until must be in the future'],
    summary: 'Hide the card until a time in the future; cancels any auto-resolve',
    scope: 'review:write',
    bucket: 'writes',
    params: IdParams,
    body: SnoozeBody,
    responses: { 200: { description: 'Snoozed', schema: SnoozeResponse } },
    errors: [409],
  }).handle(async ({ params, body }, ctx) => ({
    body: await snoozeCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body.until),
  })),
  defineRoute({
    method: 'post',
    path: '/api/v1/review/{id}/dismiss',
    operationId: 'dismissReviewCard',
    summary: 'Close the card without shipping; the reason teaches the agent',
    scope: 'review:write',
    bucket: 'writes',
    params: IdParams,
    body: DismissBody,
    responses: { 200: { description: 'Dismissed', schema: DismissResponse } },
    errors: [409],
  }).handle(async ({ params, body }, ctx) => ({
    body: await dismissCard(ctx.deps, ctx.actor, ctx.principal.accountId, params.id, body.reason),
  })),
];
