import { z } from 'zod';
import { SCOPES } from '../../src/tokens/tokens.types.js';

const Limit = z.object({ perMinute: z.number().int(), burst: z.number().int() });

export const MeResponse = z
  .object({
    me: z.object({
      tokenId: z.string(),
      label: z.string(),
      scopes: z.array(z.enum(SCOPES)),
      createdAt: z.number().int(),
      lastUsedAt: z.number().int(),
      account: z.object({ id: z.string(), name: z.string() }),
      limits: z.object({ reads: Limit, writes: Limit, messages: Limit, account: Limit }),
    }),
  })
  .meta({ id: 'MeResponse' });
