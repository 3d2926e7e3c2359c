import { describe, expect, it } from 'vitest';
import { threadedCall } from '../../src/agent/replies/reply-thread.js';

// Whichever brain drafts the follow-up to a reply (the llm brain never copies Message-IDs), it threads
// under that reply: the runtime adds In-Reply-To and References to an email shipped to the replier.

const wake = {
  label: 'mail reply',
  content: {
    from: 'Jane@Acme.test',
    messageId: '<ours-1@inbound.test>',
    replyMessageId: '<reply-1@mail.gmail.com>',
    references: ['<ours-1@inbound.test>', '<reply-1@mail.gmail.com>'],
  },
};
const ship = (args: Record<string, unknown>) => ({ id: 'c1', name: 'ship', args: { work: 'email', title: 'Re', ...args } });

describe('threadedCall', () => {
  it('gives an email to the replier the reply as In-Reply-To and the chain as References', () => {
    const call = threadedCall(wake, ship({ to: 'jane@acme.test', subject: 'Re: hello', details: { note: 'kept' } }));
    expect(call.args.details).toEqual({
      note: 'kept',
      inReplyTo: '<reply-1@mail.gmail.com>',
      references: ['<ours-1@inbound.test>', '<reply-1@mail.gmail.com>'],
    });
  });

  it('keeps an In-Reply-To the brain set, and leaves mail to anyone else, other work and other inputs alone', () => {
    const own = ship({ to: 'jane@acme.test', details: { inReplyTo: '<x@y>' } });
    expect(threadedCall(wake, own)).toBe(own);
    const other = ship({ to: 'bob@acme.test' });
    expect(threadedCall(wake, other)).toBe(other);
    const post = { id: 'c2', name: 'ship', args: { work: 'blog_post', title: 't' } };
    expect(threadedCall(wake, post)).toBe(post);
    const reply = { id: 'c3', name: 'reply', args: { text: 'hi' } };
    expect(threadedCall(wake, reply)).toBe(reply);
    const fromHook = ship({ to: 'jane@acme.test' });
    expect(threadedCall({ label: 'crm', content: wake.content }, fromHook)).toBe(fromHook);
    expect(threadedCall(null, fromHook)).toBe(fromHook);
  });

  it("answers our mail when the reply's own Message-ID is missing", () => {
    const bare = { label: 'mail reply', content: { from: 'jane@acme.test', messageId: '<ours-1@inbound.test>' } };
    expect(threadedCall(bare, ship({ to: 'jane@acme.test' })).args.details).toEqual({ inReplyTo: '<ours-1@inbound.test>' });
  });
});
