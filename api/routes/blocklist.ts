import type { z } from 'zod';
import { auditedWrite } from '../../src/audit/audit.service.js';
import { addToBlocklist, listBlocklist } from '../../src/blocklist/blocklist.service.js';
import type { Reply, RouteContext } from '../route.js';
import type { BlocklistAddBody, BlocklistAddResponse, BlocklistPage, BlocklistQuery } from './blocklist.schemas.js';

/** GET /blocklist: newest first, with a cursor. */
export async function getBlocklist({ query }: { query: z.output<typeof BlocklistQuery> }, ctx: RouteContext): Promise<Reply> {
  const body: z.infer<typeof BlocklistPage> = await listBlocklist(ctx.deps.db, ctx.principal.accountId, {
    limit: query.limit ?? 50,
    cursor: query.cursor ?? null,
    cursorSecret: await ctx.deps.cursorSecret(),
  });
  return { body };
}

/** POST /blocklist: idempotent add with source `api`, recorded against the token's label. */
export async function postBlocklist({ body: input }: { body: z.output<typeof BlocklistAddBody> }, ctx: RouteContext): Promise<Reply> {
  const body: z.infer<typeof BlocklistAddResponse> = await auditedWrite(ctx.deps.db, ctx.actor, async (trx) => ({
    result: await addToBlocklist(trx, ctx.principal.accountId, input.entries, 'api', ctx.principal.label),
    targetId: null,
  }));
  return { body };
}
