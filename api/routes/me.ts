import type { z } from 'zod';
import type { RouteContext, Reply } from '../route.js';
import type { MeResponse } from './me.schemas.js';

/** GET /me: the token resolved for this very request, so `lastUsedAt` is now. */
export async function getMe(_input: unknown, ctx: RouteContext): Promise<Reply> {
  const p = ctx.principal;
  const body: z.infer<typeof MeResponse> = {
    me: {
      tokenId: p.tokenId,
      label: p.label,
      scopes: p.scopes,
      createdAt: p.createdAt,
      lastUsedAt: Date.now(),
      account: { id: p.accountId, name: p.accountName },
      limits: ctx.deps.config.limits,
    },
  };
  return { body };
}
