import { deliveryPage } from '../../src/webhooks/delivery-log.js';
import {
  createHook,
  deleteHook,
  disableHook,
  enableHook,
  listHooks,
  regenerateHook,
  replayDelivery,
} from '../../src/webhooks/webhooks.service.js';
import { NotFound } from '../../src/errors.js';
import { defineRoute, type AppDeps, type RouteDef } from '../route-def.js';
import {
  CreateHookBody,
  DeliveriesPage,
  DeliveriesQuery,
  DeliveryParams,
  HookParams,
  HookReply,
  HooksList,
  HookWithUrl,
  Replayed,
} from './hooks.schemas.js';

/** A hook as the dashboard lists it (the services' `status` as `enabled`). */
async function hooksOf(deps: AppDeps, accountId: string) {
  return (await listHooks(deps.db, accountId)).map((h) => ({
    id: h.hookId,
    label: h.label,
    enabled: h.status === 'active',
    createdAt: h.createdAt,
    lastDeliveryAt: h.lastDeliveryAt,
  }));
}

async function hookOf(deps: AppDeps, accountId: string, hookId: string) {
  const hook = (await hooksOf(deps, accountId)).find((h) => h.id === hookId);
  if (!hook) throw new NotFound();
  return hook;
}

const owner = { auth: 'session', role: 'owner', scope: null } as const;

/** Settings, Webhooks (owners only): the same verbs as the admin CLI's `hook` verbs, for the person's account. */
export const hookRoutes: RouteDef[] = [
  defineRoute({
    ...owner,
    method: 'get',
    path: '/dashboard/api/hooks',
    operationId: 'listDashboardHooks',
    summary: "The account's hooks (never their URLs)",
    bucket: 'reads',
    responses: { 200: { description: 'The hooks', schema: HooksList } },
  }).handle(async (_input, ctx) => ({ body: { items: await hooksOf(ctx.deps, ctx.session!.account.id) } })),

  defineRoute({
    ...owner,
    method: 'post',
    path: '/dashboard/api/hooks',
    operationId: 'createDashboardHook',
    summary: 'Creates a hook; its secret URL is answered this once',
    bucket: 'writes',
    body: CreateHookBody,
    errors: [409],
    responses: { 201: { description: 'Created', schema: HookWithUrl } },
  }).handle(async ({ body }, ctx) => {
    const accountId = ctx.session!.account.id;
    const { hookId, url } = await createHook(ctx.deps, ctx.deps.config.baseUrl, { accountId, label: body.label }, ctx.actor);
    return { status: 201, body: { hook: await hookOf(ctx.deps, accountId, hookId), url } };
  }),

  defineRoute({
    ...owner,
    method: 'post',
    path: '/dashboard/api/hooks/{id}/disable',
    operationId: 'disableDashboardHook',
    summary: 'Disables a hook: its URL answers 404 at once',
    bucket: 'writes',
    params: HookParams,
    responses: { 200: { description: 'Disabled', schema: HookReply } },
  }).handle(async ({ params }, ctx) => {
    await disableHook(ctx.deps, params.id, ctx.actor);
    return { body: { hook: await hookOf(ctx.deps, ctx.session!.account.id, params.id) } };
  }),

  defineRoute({
    ...owner,
    method: 'post',
    path: '/dashboard/api/hooks/{id}/enable',
    operationId: 'enableDashboardHook',
    summary: 'Enables a hook: the same URL works again',
    bucket: 'writes',
    params: HookParams,
    errors: [409],
    responses: { 200: { description: 'Enabled', schema: HookReply } },
  }).handle(async ({ params }, ctx) => {
    await enableHook(ctx.deps, params.id, ctx.actor);
    return { body: { hook: await hookOf(ctx.deps, ctx.session!.account.id, params.id) } };
  }),

  defineRoute({
    ...owner,
    method: 'post',
    path: '/dashboard/api/hooks/{id}/regenerate',
    operationId: 'regenerateDashboardHook',
    summary: 'A new secret URL for the hook, answered this once; the old URL answers 404 at once',
    bucket: 'writes',
    params: HookParams,
    responses: { 200: { description: 'Regenerated', schema: HookWithUrl } },
  }).handle(async ({ params }, ctx) => {
    const { url } = await regenerateHook(ctx.deps, ctx.deps.config.baseUrl, params.id, ctx.actor);
    return { body: { hook: await hookOf(ctx.deps, ctx.session!.account.id, params.id), url } };
  }),

  defineRoute({
    ...owner,
    method: 'delete',
    path: '/dashboard/api/hooks/{id}',
    operationId: 'deleteDashboardHook',
    summary: 'Deletes a hook and its delivery log',
    bucket: 'writes',
    params: HookParams,
    responses: { 204: { description: 'Deleted' } },
  }).handle(async ({ params }, ctx) => {
    await deleteHook(ctx.deps, params.id, ctx.actor);
    return { status: 204 };
  }),

  defineRoute({
    ...owner,
    method: 'get',
    path: '/dashboard/api/hooks/{id}/deliveries',
    operationId: 'listDashboardHookDeliveries',
    summary: "The hook's delivery log, newest first, with a bounded preview of each body; follow nextCursor until null",
    stateRules: ['cursor is not valid'],
    bucket: 'reads',
    params: HookParams,
    query: DeliveriesQuery,
    responses: { 200: { description: 'One page of deliveries', schema: DeliveriesPage } },
  }).handle(async ({ params, query }, ctx) => ({
    body: await deliveryPage(ctx.deps.db, await ctx.deps.cursorSecret(), ctx.session!.account.id, params.id, {
      outcome: query.outcome ?? null,
      cursor: query.cursor ?? null,
      limit: query.limit ?? 50,
    }),
  })),

  defineRoute({
    ...owner,
    method: 'post',
    path: '/dashboard/api/hooks/{id}/deliveries/{deliveryId}/replay',
    operationId: 'replayDashboardHookDelivery',
    summary: 'Hands a logged delivery to the agent again as a new delivery marked as its replay, under the same limits',
    bucket: 'writes',
    params: DeliveryParams,
    errors: [409],
    responses: { 202: { description: 'Accepted as a new delivery', schema: Replayed } },
  }).handle(async ({ params }, ctx) => {
    const replayed = await replayDelivery(ctx.deps, params.deliveryId, { actor: ctx.actor, hookId: params.id });
    return { status: 202, body: { deliveryId: replayed.deliveryId, replayOf: params.deliveryId } };
  }),
];
