import { describe, expect } from 'vitest';
import { networkPage } from '../../src/channels/network-poll.js';
import type { Config } from '../../src/config.js';
import { networkReplyEffects } from '../../src/inbound/network-replies.service.js';
import { completion } from '../helpers/fake-llm.js';
import { it } from '../helpers/fixture.js';

/**
 * A poll's page holds up to 100 replies; with the llm brain each is judged by a model call within its
 * timeout, so they are judged several at once (8), not one after another. The model stand-in holds every
 * request until eight wait together (or two seconds pass): replies judged one at a time would never have
 * more than one waiting.
 */
describe('judging the replies of a network poll page', () => {
  it('asks the model about eight replies at once, each once', async ({ env, llm }) => {
    const { accountId } = await env.tenant();
    const config: Config = {
      ...env.config,
      agent: { ...env.config.agent, brain: 'llm', llm: { ...env.config.agent.llm, baseUrl: llm.baseUrl, timeoutMs: 5_000 } },
    };
    let waiting = 0;
    let most = 0;
    const held: (() => void)[] = [];
    llm.script(async () => {
      most = Math.max(most, ++waiting);
      if (waiting >= 8) for (const release of held.splice(0)) release();
      else
        await new Promise<void>((resolve) => {
          held.push(resolve);
          setTimeout(resolve, 2_000);
        });
      waiting--;
      return { body: completion('{"replyKind": "interested"}') };
    });
    const now = Date.now();
    const events = Array.from({ length: 12 }, (_, i) => ({
      id: `reply-${i}`,
      type: 'reply',
      at: now - 1_000,
      data: { profileUrl: `https://www.linkedin.com/in/person-${i}`, text: `Thanks, reply number ${i}.` },
    }));
    // The same reply twice in one page is judged once.
    events.push({ ...events[0]! });
    await networkPage(env.deps.db, accountId, events, now, networkReplyEffects({ ...env.deps, config }));
    expect(most).toBe(8);
    expect(llm.requests).toHaveLength(12);
  });
});
