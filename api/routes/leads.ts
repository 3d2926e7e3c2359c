import { auditedWrite } from '../../src/audit/audit.service.js';
import { getLead, labelLead, listLeads } from '../../src/leads/leads.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { IdParams } from '../schemas.js';
import { LeadLabelsBody, LeadLabelsResponse, LeadResponse, LeadsPage, LeadsQuery } from './leads.schemas.js';

/** Leads. */
export const leadsRoutes: RouteDef[] = [
  /** Bounded in rows and bytes. */
  defineRoute({
    method: 'get',
    path: '/api/v1/leads',
    operationId: 'listLeads',
    stateRules: ['cursor is not valid'],
    summary: 'Leads, newest created first; follow nextCursor until null',
    scope: 'leads:read',
    bucket: 'reads',
    query: LeadsQuery,
    responses: { 200: { description: 'One page of leads (list form)', schema: LeadsPage } },
  }).handle(async ({ query }, ctx) => {
    const { config, db } = ctx.deps;
    const page = await listLeads(db, ctx.principal.accountId, {
      status: query.status ?? null,
      limit: query.limit ?? 50,
      cursor: query.cursor ?? null,
      cursorSecret: await ctx.deps.cursorSecret(),
      maxBytes: config.leadsPageMaxBytes,
    });
    return { body: page };
  }),
  /** The detail form with the caps of spec 2.8. */
  defineRoute({
    method: 'get',
    path: '/api/v1/leads/{id}',
    operationId: 'getLead',
    summary: 'One lead in detail form: draft, research, contacts',
    scope: 'leads:read',
    bucket: 'reads',
    params: IdParams,
    responses: { 200: { description: 'The lead', schema: LeadResponse } },
  }).handle(async ({ params }, ctx) => ({ body: { lead: await getLead(ctx.deps.db, ctx.principal.accountId, params.id) } })),
  /** Labels only; answers them as stored. */
  defineRoute({
    method: 'patch',
    path: '/api/v1/leads/{id}',
    operationId: 'labelLead',
    summary: 'Label a lead: vertical, archetype, tags (null clears)',
    scope: 'leads:write',
    bucket: 'writes',
    params: IdParams,
    body: LeadLabelsBody,
    responses: { 200: { description: 'The labels as stored', schema: LeadLabelsResponse } },
  }).handle(async ({ params, body: labels }, ctx) => {
    const lead = await auditedWrite(ctx.deps.db, ctx.actor, async (trx) => ({
      result: await labelLead(trx, ctx.principal.accountId, params.id, labels),
      targetId: params.id,
    }));
    return { body: { lead } };
  }),
];
