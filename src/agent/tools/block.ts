import { z } from 'zod';
import { addToBlocklist } from '../../blocklist/blocklist.service.js';
import { defineTool } from './tool.js';

/** A domain, address or profile added to the do-not-contact block list. */
export const block = defineTool({
  name: 'block',
  description: 'Add a domain or email address to the do-not-contact block list.',
  input: z.object({ value: z.string().min(3).max(320), reason: z.string().max(500).optional() }),
  async handler(args, ctx) {
    const r = await addToBlocklist(ctx.db, ctx.accountId, [{ value: args.value, reason: args.reason ?? null }], 'agent', 'agent');
    if (r.invalid.length) return `${args.value} is not a domain, an email or a profile URL; nothing was blocked`;
    return r.added ? `${args.value} is now on the block list` : `${args.value} was already on the block list`;
  },
});
