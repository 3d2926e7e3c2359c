import { auditedWrite } from '../../src/audit/audit.service.js';
import { addToBlocklist, listBlocklist } from '../../src/blocklist/blocklist.service.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { BlocklistAddBody, BlocklistAddResponse, BlocklistPage, BlocklistQuery } from './blocklist.schemas.js';

/** Block list. */
export const blocklistRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/blocklist',
    operationId: 'listBlocklistEntries',
    stateRules: ['cursor is not valid'],
    summary: 'The do-not-contact list, newest first',
    scope: 'leads:read',
    bucket: 'reads',
    query: BlocklistQuery,
    responses: { 200: { description: 'One page of entries', schema: BlocklistPage } },
  }).handle(async ({ query }, ctx) => ({
    body: await listBlocklist(ctx.deps.db, ctx.principal.accountId, {
      limit: query.limit ?? 50,
      cursor: query.cursor ?? null,
      cursorSecret: await ctx.deps.cursorSecret(),
    }),
  })),
  /** Source `api`, recorded against the token's label. */
  defineRoute({
    method: 'post',
    path: '/api/v1/blocklist',
    operationId: 'addBlocklistEntries',
    summary: 'Add up to 500 domains, emails or profile URLs (idempotent)',
    scope: 'leads:write',
    bucket: 'writes',
    body: BlocklistAddBody,
    responses: { 200: { description: 'How many were added, already listed, or unreadable', schema: BlocklistAddResponse } },
  }).handle(async ({ body }, ctx) => ({
    body: await auditedWrite(ctx.deps.db, ctx.actor, async (trx) => ({
      result: await addToBlocklist(trx, ctx.principal.accountId, body.entries, 'api', ctx.principal.label),
      targetId: null,
    })),
  })),
];
