import { inboundOfLead } from '../../src/inbound/lead-outcomes.js';
import { searchLeads } from '../../src/leads/search.js';
import { leadTimeline, type TimelineSource, timelineEntry } from '../../src/leads/timeline.js';
import { sendsOfLead } from '../../src/mail/lead-sends.js';
import { visitsOfLead } from '../../src/measurement/lead-visits.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { IdParams } from '../schemas.js';
import { LeadSearchPage, LeadSearchQuery, LeadTimeline, TimelineQuery } from './leads.schemas.js';

/**
 * The timeline's parts each owner reads (docs/dashboard.md, "Leads"): the mail sent (mail), what came back (inbound)
 * and the visits through the lead's links (measurement). The leads area adds its research; it stands below mail and
 * inbound, so their reads are handed to it here.
 */
const TIMELINE_SOURCES: readonly TimelineSource[] = [
  async (q, accountId, leadId, limit) =>
    (await sendsOfLead(q, accountId, leadId, limit)).map((s) => timelineEntry('sent', s.at, { to: s.to, step: s.step })),
  async (q, accountId, leadId, limit) =>
    (await inboundOfLead(q, accountId, leadId, limit)).map((m) =>
      timelineEntry(m.kind, m.at, { replyKind: m.kind === 'reply' ? m.replyKind : null }),
    ),
  async (q, accountId, leadId, limit) =>
    (await visitsOfLead(q, accountId, leadId, limit)).map((v) => timelineEntry('visit', v.at, { channel: v.channel, url: v.url })),
];

/**
 * The leads pages' routes of their own: a search over all of the account's leads (the contract's `GET /leads` has
 * no search), and a lead's timeline. Everything else the pages do is the /api/v1 leads and block list routes under
 * /dashboard/api/v1.
 */
export const leadRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/leads',
    operationId: 'searchLeads',
    stateRules: ['cursor is not valid'],
    summary: "The account's leads whose domain, company, or a contact's address or name holds q; newest created first",
    auth: 'session',
    scope: 'leads:read',
    bucket: 'reads',
    query: LeadSearchQuery,
    responses: { 200: { description: 'One page of matching leads (list form)', schema: LeadSearchPage } },
  }).handle(async ({ query }, ctx) => ({
    body: await searchLeads(ctx.deps.db, ctx.principal.accountId, {
      q: query.q,
      status: query.status ?? null,
      limit: query.limit ?? 50,
      cursor: query.cursor ?? null,
      cursorSecret: await ctx.deps.cursorSecret(),
      maxBytes: ctx.deps.config.leadsPageMaxBytes,
    }),
  })),

  defineRoute({
    method: 'get',
    path: '/dashboard/api/leads/{id}/timeline',
    operationId: 'getLeadTimeline',
    summary: 'What happened to a lead, newest first: mail sent, replies, bounces, unsubscribes, visits, research',
    auth: 'session',
    scope: 'leads:read',
    bucket: 'reads',
    params: IdParams,
    query: TimelineQuery,
    responses: { 200: { description: 'The newest entries; truncated when there were more', schema: LeadTimeline } },
  }).handle(async ({ params, query }, ctx) => ({
    body: await leadTimeline(ctx.deps.db, ctx.principal.accountId, params.id, TIMELINE_SOURCES, query.limit ?? 50),
  })),
];
