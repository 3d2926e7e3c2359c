import { z } from 'zod';
import { LEAD_STATUSES } from '../../src/leads/leads.types.js';
import { SEARCH_MAX_CHARS, SEARCH_MIN_CHARS } from '../../src/leads/search.js';
import { TIMELINE_KINDS } from '../../src/leads/timeline.js';
import { LeadListItem } from '../routes/leads.schemas.js';
import { queryInt } from '../schemas.js';

/** `q` anywhere in a lead's domain or company, or a contact's address or name; `status` as `GET /api/v1/leads`. */
export const LeadSearchQuery = z
  .object({
    q: z.string().trim().min(SEARCH_MIN_CHARS).max(SEARCH_MAX_CHARS),
    status: z.enum(LEAD_STATUSES).optional(),
    limit: queryInt(1, 100, 50),
    cursor: z.string().optional(),
  })
  .strict();

export const LeadSearchPage = z
  .object({ leads: z.array(LeadListItem), nextCursor: z.string().nullable() })
  .strict()
  .meta({ id: 'LeadSearchPage' });

export const TimelineQuery = z.object({ limit: queryInt(1, 100, 50) }).strict();

const TimelineEntry = z
  .object({
    kind: z.enum(TIMELINE_KINDS),
    at: z.number().int(),
    to: z.string().nullable(),
    step: z.number().int().nullable(),
    replyKind: z.string().nullable(),
    channel: z.string().nullable(),
    url: z.string().nullable(),
    key: z.string().nullable(),
  })
  .strict()
  .meta({ id: 'LeadTimelineEntry' });

export const LeadTimeline = z
  .object({ entries: z.array(TimelineEntry), truncated: z.boolean() })
  .strict()
  .meta({ id: 'LeadTimeline' });
