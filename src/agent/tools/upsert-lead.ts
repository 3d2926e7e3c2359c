import { z } from 'zod';
import { BadRequest } from '../../errors.js';
import { upsertLead as recordLead } from '../../leads/leads.service.js';
import { defineTool } from './tool.js';

/** A lead recorded or updated by domain, with research entries and contacts. */
export const upsertLead = defineTool({
  name: 'upsert_lead',
  description: 'Record or update a lead by domain, with research entries and contacts.',
  input: z.object({
    domain: z.string().min(3).max(253),
    companyName: z.string().max(200).optional(),
    research: z
      .array(
        z.object({
          key: z.string().min(1).max(120),
          reasoning: z.string().max(8_000),
          sources: z
            .array(z.object({ url: z.string(), title: z.string() }))
            .max(20)
            .optional(),
        }),
      )
      .max(20)
      .optional(),
    contacts: z
      .array(
        z.object({
          name: z.string().max(200).optional(),
          email: z.string().max(320).optional(),
          title: z.string().max(200).optional(),
          profileUrl: z.string().max(2_048).optional(),
        }),
      )
      .max(50)
      .optional(),
  }),
  async handler(args, ctx) {
    try {
      const { id, created } = await recordLead(ctx.db, ctx.accountId, {
        domain: args.domain,
        companyName: args.companyName,
        research: args.research?.map((r) => ({ key: r.key, reasoning: r.reasoning, sources: r.sources ?? [] })),
        contacts: args.contacts,
      });
      return `lead ${id} ${created ? 'recorded' : 'updated'}`;
    } catch (err) {
      if (err instanceof BadRequest) return `not recorded: ${err.error}`;
      throw err;
    }
  },
});
