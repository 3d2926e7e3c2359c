import { defineRoute, type RouteDef } from '../route-def.js';
import { MeResponse } from './me.schemas.js';

export const meRoutes: RouteDef[] = [
  /** The token resolved for this very request, so `lastUsedAt` is now. */
  defineRoute({
    method: 'get',
    path: '/api/v1/me',
    operationId: 'getMe',
    summary: 'The calling token, its account and its rate limits',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The token', schema: MeResponse } },
  }).handle(async (_input, ctx) => {
    const p = ctx.principal;
    return {
      body: {
        me: {
          tokenId: p.tokenId,
          label: p.label,
          scopes: p.scopes,
          createdAt: p.createdAt,
          lastUsedAt: Date.now(),
          account: { id: p.accountId, name: p.accountName },
          limits: ctx.deps.config.limits,
        },
      },
    };
  }),
];
