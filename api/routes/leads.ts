import type { z } from 'zod';
import { auditedWrite } from '../../src/audit/audit.service.js';
import { getLead, labelLead, listLeads } from '../../src/leads/leads.service.js';
import type { Reply, RouteContext } from '../route.js';
import type { IdParams } from '../schemas.js';
import type { LeadLabelsBody, LeadLabelsResponse, LeadResponse, LeadsPage, LeadsQuery } from './leads.schemas.js';

/** GET /leads: newest created first, bounded in rows and bytes; follow `nextCursor` until null. */
export async function getLeads({ query }: { query: z.output<typeof LeadsQuery> }, ctx: RouteContext): Promise<Reply> {
  const { config, db } = ctx.deps;
  const body: z.infer<typeof LeadsPage> = await listLeads(db, ctx.principal.accountId, {
    status: query.status ?? null,
    limit: query.limit ?? 50,
    cursor: query.cursor ?? null,
    cursorSecret: await ctx.deps.cursorSecret(),
    maxBytes: config.leadsPageMaxBytes,
  });
  return { body };
}

/** GET /leads/{id}: the detail form with the caps of spec 2.8. */
export async function getLeadById({ params }: { params: z.output<typeof IdParams> }, ctx: RouteContext): Promise<Reply> {
  const body: z.infer<typeof LeadResponse> = { lead: await getLead(ctx.deps.db, ctx.principal.accountId, params.id) };
  return { body };
}

/** PATCH /leads/{id}: labels only; answers them as stored. */
export async function patchLead(
  { params, body: labels }: { params: z.output<typeof IdParams>; body: z.output<typeof LeadLabelsBody> },
  ctx: RouteContext,
): Promise<Reply> {
  const lead = await auditedWrite(ctx.deps.db, ctx.actor, async (trx) => ({
    result: await labelLead(trx, ctx.principal.accountId, params.id, labels),
    targetId: params.id,
  }));
  const body: z.infer<typeof LeadLabelsResponse> = { lead };
  return { body };
}
