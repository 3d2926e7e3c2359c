import { z } from 'zod';
import { LEAD_CAPS } from './leads.types.js';

/**
 * The rules of a lead's labels, written once: `PATCH /api/v1/leads/{id}` (api/routes/leads.schemas.ts) and the
 * CSV import (import.service.ts) both read a label through these schemas.
 */

/** A label: trimmed; empty means cleared, as does null. */
export const LeadLabel = z
  .string()
  .trim()
  .max(LEAD_CAPS.label, `must be at most ${LEAD_CAPS.label} characters`)
  .transform((s) => (s === '' ? null : s))
  .nullable()
  .optional();

export const LeadTags = z
  .array(z.string().trim().min(1, 'must not be empty').max(LEAD_CAPS.tag, `must be at most ${LEAD_CAPS.tag} characters`))
  .transform((tags) => [...new Set(tags)])
  .pipe(z.array(z.string()).max(LEAD_CAPS.tags, `must have at most ${LEAD_CAPS.tags} different tags`))
  // JSON Schema cannot count distinct items, and `maxItems` would refuse repeats we take (they are dropped):
  // the limit is stated for readers, and as `x-max-distinct-items` for tools.
  .meta({
    description: `At most ${LEAD_CAPS.tags} different tags (repeats are dropped, order kept), each 1 to ${LEAD_CAPS.tag} characters`,
    'x-max-distinct-items': LEAD_CAPS.tags,
  })
  .nullable()
  .optional();

export const LeadLabels = z.object({ vertical: LeadLabel, archetype: LeadLabel, tags: LeadTags }).strict();
