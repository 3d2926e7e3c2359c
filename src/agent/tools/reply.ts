import { z } from 'zod';
import { defineTool, text } from './tool.js';

/** One chat bubble to the person who messaged the agent (the turn's step records it with the bubble). */
export const reply = defineTool({
  name: 'reply',
  description: 'Send one chat bubble to the person who messaged you.',
  input: z.object({ text: text(4_000) }),
  async handler(args, ctx) {
    await ctx.onReply(args.text);
    return 'sent';
  },
});
