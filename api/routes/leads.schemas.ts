import { z } from 'zod';
import { CONTACT_STATUSES } from '../../src/leads/leads.types.js';
import { LEAD_STATUSES } from '../../src/leads/leads.types.js';
import { LeadLabels } from '../../src/leads/lead-labels.js';
import { queryInt } from '../schemas.js';

export const LeadsQuery = z.object({
  status: z.enum(LEAD_STATUSES).optional(),
  limit: queryInt(1, 100, 50),
  cursor: z.string().optional(),
});

/** The label rules are the leads area's (src/leads/lead-labels.ts), shared with the CSV import. */
export const LeadLabelsBody = LeadLabels;

const Contact = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    title: z.string().nullable(),
    profileUrl: z.string().nullable(),
    // Not shown in spec 2.8 ("fields of a contact: not shown"): decided in docs/decisions/mail-leads-and-threads.md.
    status: z.enum(CONTACT_STATUSES),
    replyKind: z.string().nullable(),
  })
  .meta({ id: 'LeadContact' });

const listShape = {
  id: z.string(),
  domain: z.string(),
  companyName: z.string().nullable(),
  status: z.string(),
  replyKind: z.string().nullable(),
  declineReason: z.string().nullable(),
  score: z.number().int().nullable(),
  scoreReasons: z.array(z.string()),
  vertical: z.string().nullable(),
  archetype: z.string().nullable(),
  tags: z.array(z.string()),
  fields: z.array(z.object({ key: z.string(), value: z.string().nullable() })),
  // The lead's contact or null: the union keeps the LeadContact component itself not nullable.
  contact: z.union([Contact, z.null()]),
  createdAt: z.number().int(),
};

export const LeadListItem = z.object(listShape).strict().meta({ id: 'LeadListItem' });

export const LeadDetail = z
  .object({
    ...listShape,
    draft: z.object({ subject: z.string(), body: z.string() }).nullable(),
    research: z.array(
      z.object({
        key: z.string(),
        reasoning: z.string(),
        sources: z.array(z.object({ url: z.string(), title: z.string() })),
        sourcesTruncated: z.boolean(),
      }),
    ),
    contacts: z.array(Contact),
    contactsTruncated: z.boolean(),
  })
  .strict()
  .meta({ id: 'LeadDetail' });

export const LeadsPage = z.object({ leads: z.array(LeadListItem), nextCursor: z.string().nullable() }).meta({ id: 'LeadsPage' });
export const LeadResponse = z.object({ lead: LeadDetail }).meta({ id: 'LeadResponse' });
export const LeadLabelsResponse = z
  .object({
    lead: z
      .object({
        id: z.string(),
        domain: z.string(),
        vertical: z.string().nullable(),
        archetype: z.string().nullable(),
        tags: z.array(z.string()),
      })
      .strict(),
  })
  .strict()
  .meta({ id: 'LeadLabelsResponse' });
