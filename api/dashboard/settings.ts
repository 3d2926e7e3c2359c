import { mailSettings, setMailFrom } from '../../src/mail/mail-settings.js';
import { approvalSettingsView, changeApprovalMode } from '../../src/review/approval-settings.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { ApprovalBody, ApprovalReply, ApprovalsList, KindParams, MailSettingsBody, MailSettingsReply } from './settings.schemas.js';

/** Settings, Mail and Approvals: anyone signed in reads them; owners change them. */
export const settingsRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/settings/mail',
    operationId: 'getMailSettings',
    summary: 'Who mail is from, the DKIM record to publish, and where replies arrive',
    auth: 'session',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The mail settings', schema: MailSettingsReply } },
  }).handle(async (_input, ctx) => ({ body: await mailSettings(ctx.deps.db, ctx.deps.config, ctx.session!.account.id) })),

  defineRoute({
    method: 'patch',
    path: '/dashboard/api/settings/mail',
    operationId: 'setMailSettings',
    summary: "Gives the account's mail its own From, at a domain the operator allowed",
    auth: 'session',
    role: 'owner',
    scope: null,
    bucket: 'writes',
    body: MailSettingsBody,
    responses: { 200: { description: 'The mail settings as they now are', schema: MailSettingsReply } },
  }).handle(async ({ body }, ctx) => {
    const accountId = ctx.session!.account.id;
    await setMailFrom(ctx.deps.db, ctx.deps.config, accountId, body.from, { field: 'from', actor: ctx.actor });
    return { body: await mailSettings(ctx.deps.db, ctx.deps.config, accountId) };
  }),

  defineRoute({
    method: 'get',
    path: '/dashboard/api/settings/approvals',
    operationId: 'getApprovalSettings',
    summary: "Each kind of work's approval mode and where its trust ladder stands, in words",
    auth: 'session',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The approval settings', schema: ApprovalsList } },
  }).handle(async (_input, ctx) => ({
    body: { items: await approvalSettingsView(ctx.deps.db, ctx.deps.config, ctx.session!.account.id) },
  })),

  defineRoute({
    method: 'patch',
    path: '/dashboard/api/settings/approvals/{kind}',
    operationId: 'setApprovalMode',
    summary: 'Sets how a kind of work is approved: always_ask, trust_ladder or ship (spending always asks)',
    auth: 'session',
    role: 'owner',
    scope: null,
    bucket: 'writes',
    params: KindParams,
    body: ApprovalBody,
    responses: { 200: { description: 'The kind as it now is', schema: ApprovalReply } },
  }).handle(async ({ params, body }, ctx) => {
    const { db, config } = ctx.deps;
    return { body: { item: await changeApprovalMode(db, config, ctx.actor, ctx.session!.account.id, params.kind, body.mode) } };
  }),
];
