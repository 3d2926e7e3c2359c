import { describe, expect } from 'vitest';
import { killTurnBusSubscriber } from '../helpers/agent.js';
import { agentOptions, it } from '../helpers/fixture.js';
import { completion } from '../helpers/fake-llm.js';

// A running turn learns of a later message from the Redis cancel notice; it reads the interrupt flag
// from Postgres only while that notice could have been missed. This file breaks the subscription.
it.override('options', ({ llm }) =>
  agentOptions({ AGENT_BRAIN: 'llm', LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test', LLM_TIMEOUT_MS: '10000', LLM_MAX_RETRIES: '0' }),
);

describe('interrupt without the cancel notice', () => {
  it('stops at the next step on the Postgres flag when the subscriber broke during the turn', async ({ agent: env, llm }) => {
    const { token, accountId } = await env.tenant();
    // While the model "thinks", the subscriber connection breaks and a later message's flag lands in
    // Postgres with no notice.
    llm.script(() => {
      void killTurnBusSubscriber(env).then(() =>
        env.deps.db('agent_turns').where({ account_id: accountId, status: 'running' }).update({ interrupt_requested_at: Date.now() }),
      );
      return { delayMs: 1_000, body: completion(null, [{ id: 'r1', name: 'reply', args: { text: 'first bubble' } }]) };
    });
    const res = await env.send(token, { text: 'think about it', waitSeconds: 20 });
    expect(res.status).toBe(200);
    expect(res.body.message).toMatchObject({ status: 'failed', interrupted: true, failure: 'interrupted by a later message', replies: [] });
  });
});
