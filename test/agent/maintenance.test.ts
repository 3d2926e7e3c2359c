import { describe, expect } from 'vitest';
import { recordTurn } from '../../src/agent/messages/agent.service.js';
import { agentOptions, it } from '../helpers/fixture.js';

// The six-hour queued lifetime shortened to one second; the sweeper runs every 300 ms.
it.override(
  'options',
  agentOptions(
    { AGENT_STEP_DELAY_MS: '1500', AGENT_QUEUED_MESSAGE_TTL_MS: '1000', MAINTENANCE_SWEEP_MS: '300', MAINTENANCE_ORPHAN_AFTER_MS: '500' },
    ['agent-turns', 'maintenance'],
  ),
);

describe('maintenance pool', () => {
  it('fails a queue: true message still queued after its (configured) lifetime, while earlier work still runs', async ({ agent: env }) => {
    const { token } = await env.tenant();
    const a = await env.send(token, { text: 'long work' });
    await env.until(token, a.body.requestId, (m) => m.status === 'running');
    const b = await env.send(token, { text: 'after that', queue: true, waitSeconds: 10 });
    expect(b.status).toBe(200);
    expect(b.body.message).toMatchObject({ status: 'failed', failure: expect.stringMatching(/still queued/) });
    expect((await env.message(token, a.body.requestId)).status).toBe('running');
    const again = await env.send(token, { text: 'after that', queue: true, clientRequestId: 'never-reused' });
    expect(again.status).toBe(202);
  });

  it('queues again a turn whose job was never queued (commit, then enqueue, then repair)', async ({ agent: env }) => {
    const { token, accountId, tokenId } = await env.tenant();
    const { turn } = await env.deps.db.transaction((trx) =>
      recordTurn(trx, env.config, { accountId, kind: 'message', origin: 'api', tokenId, text: 'lost job' }),
    );
    const m = await env.until(token, turn.id, (x) => x.status === 'replied', 20_000);
    expect(m.replies.length).toBeGreaterThan(0);
  });
});
