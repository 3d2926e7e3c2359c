import { z } from 'zod';
import { BLOCK_SOURCES, MAX_ADD } from '../../src/blocklist/blocklist.service.js';
import { queryInt } from '../schemas.js';

export const BlocklistQuery = z.object({
  limit: queryInt(1, 200, 50),
  cursor: z.string().optional(),
});

const Value = z.string().max(2_048, 'must be at most 2048 characters');

/** `{ entries: [...] }`: each a plain string, or `{ value, reason? }`; 1 to 500 of them. */
export const BlocklistAddBody = z
  .object({
    entries: z
      .array(
        z.union(
          [Value, z.object({ value: Value, reason: z.string().max(500, 'must be at most 500 characters').nullable().optional() }).strict()],
          { error: 'must be a string or an object { value, reason? }' },
        ),
      )
      .min(1, 'must have at least 1 item')
      .max(MAX_ADD, `must have at most ${MAX_ADD} items`),
  })
  .strict();

export const BlockEntry = z
  .object({
    id: z.string(),
    kind: z.enum(['domain', 'email', 'network']),
    value: z.string(),
    reason: z.string().nullable(),
    source: z.enum(BLOCK_SOURCES),
    addedBy: z.string().nullable(),
    addedAt: z.number().int(),
  })
  .strict()
  .meta({ id: 'BlockEntry' });

export const BlocklistPage = z.object({ entries: z.array(BlockEntry), nextCursor: z.string().nullable() }).meta({ id: 'BlocklistPage' });

export const BlocklistAddResponse = z
  .object({ added: z.number().int(), existing: z.number().int(), invalid: z.array(z.string()) })
  .strict()
  .meta({ id: 'BlocklistAddResponse' });
