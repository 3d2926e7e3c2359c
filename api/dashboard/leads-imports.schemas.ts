import { z } from 'zod';
import { queryInt } from '../schemas.js';

/** `map`: field=Column pairs (email=Email,name=Full name); `preview=true`: the first `limit` rows judged, nothing written. */
export const ImportQuery = z
  .object({
    map: z.string().max(2_000, 'must be at most 2000 characters').optional(),
    preview: z.enum(['true', 'false']).optional(),
    limit: queryInt(1, 100),
  })
  .strict();

const Problem = z.object({ line: z.number().int(), reason: z.string() });

export const LeadImport = z
  .object({
    id: z.string(),
    state: z.enum(['queued', 'running', 'done', 'failed']),
    processed: z.number().int(),
    total: z.number().int().nullable(),
    imported: z.number().int(),
    duplicates: z.number().int(),
    rejected: z.array(Problem),
    duplicateRows: z.array(Problem),
    error: z.string().nullable(),
    createdAt: z.number().int(),
    finishedAt: z.number().int().nullable(),
  })
  .meta({ id: 'LeadImport' });

export const ImportReply = z.object({ import: LeadImport });

export const PreviewReply = z.object({
  rows: z.array(
    z.object({
      line: z.number().int(),
      contact: z
        .object({
          email: z.string().nullable(),
          domain: z.string(),
          name: z.string().nullable(),
          company: z.string().nullable(),
          vertical: z.string().nullable(),
          archetype: z.string().nullable(),
          tags: z.array(z.string()),
        })
        .nullable(),
      problem: z.object({ kind: z.enum(['rejected', 'duplicate']), reason: z.string() }).nullable(),
    }),
  ),
});
