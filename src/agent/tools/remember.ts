import { z } from 'zod';
import { memoryNotesRepository } from '../../memory/memory-notes.repository.js';
import { defineTool, text } from './tool.js';

/** A preference or fact kept in the account's memory. */
export const remember = defineTool({
  name: 'remember',
  description: 'Keep a preference or fact in the account memory.',
  input: z.object({ text: text(1_000) }),
  async handler(args, ctx) {
    await memoryNotesRepository(ctx.db).remember(ctx.accountId, args.text, ctx.turnId, Date.now());
    return 'kept in memory';
  },
});
