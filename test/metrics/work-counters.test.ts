import { describe, expect } from 'vitest';
import { metrics } from '../../src/metrics/registry.js';
import { sampleOnce } from '../../src/metrics/sampler.js';
import { createLogger } from '../../src/logger.js';
import { newId } from '../../src/ids.js';
import { agentOptions, it } from '../helpers/fixture.js';
import { completion, llmEnv } from '../helpers/fake-llm.js';
import { buildCard, buildHook } from '../helpers/factories.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { processInbound } from '../../src/inbound/process.service.js';
import { fencesRepository } from '../../src/shipping/fence.repository.js';
import { auth } from '../helpers/auth.js';

/**
 * The counters domain code increments, read from this process's registry: the agent's pool runs here
 * against a real local stand-in of the model; the limiter, webhook intake and the sampler are the real ones.
 */
it.override('options', ({ llm }) =>
  agentOptions(
    llmEnv(llm, {
      LLM_TIMEOUT_MS: '1500',
      LLM_MAX_RETRIES: '1',
      LLM_BACKOFF_MS: '20',
      RATE_READS_BURST: '2',
      RATE_READS_PER_MINUTE: '1',
    }),
  ),
);

async function value(metric: { get(): Promise<{ values: { labels: object; value: number }[] }> }, labels: Record<string, string> = {}) {
  const { values } = await metric.get();
  return values
    .filter((v) => !('le' in v.labels) && Object.entries(labels).every(([k, want]) => (v.labels as Record<string, unknown>)[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

const withUsage = (body: ReturnType<typeof completion>, prompt: number, completionTokens: number) => ({
  ...body,
  usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens },
});

describe('work counters', () => {
  it('counts LLM calls, their tokens from usage and latency by model, and the turn by outcome and brain', async ({ agent: env, llm }) => {
    const { token } = await env.tenant();
    llm.script(
      () => ({ body: withUsage(completion(null, [{ id: 'c1', name: 'remember', args: { text: 'short mails' } }]), 120, 15) }),
      () => ({ body: withUsage(completion('Noted.'), 150, 5) }),
    );
    const res = await env.send(token, { text: 'keep it short', waitSeconds: 10 });
    expect(res.body.message).toMatchObject({ status: 'replied' });
    expect(await value(metrics.llmCalls, { model: 'test-model', outcome: 'ok' })).toBe(2);
    expect(await value(metrics.llmTokens, { model: 'test-model', kind: 'prompt' })).toBe(270);
    expect(await value(metrics.llmTokens, { model: 'test-model', kind: 'completion' })).toBe(20);
    const { values } = await metrics.llmDuration.get();
    expect(values.find((v) => v.metricName === 'gas_llm_call_duration_seconds_count' && v.labels.model === 'test-model')?.value).toBe(2);
    expect(await value(metrics.agentTurns, { outcome: 'replied', brain: 'llm' })).toBe(1);
  });

  it('counts a model that keeps failing as an errored call and a failed turn', async ({ agent: env, llm }) => {
    const { token } = await env.tenant();
    llm.script(() => ({ status: 500, body: { error: 'down' } }));
    const before = await value(metrics.agentTurns, { outcome: 'failed', brain: 'llm' });
    const res = await env.send(token, { text: 'hello', waitSeconds: 10 });
    expect(res.body.message).toMatchObject({ status: 'failed' });
    expect(await value(metrics.llmCalls, { model: 'test-model', outcome: 'error' })).toBe(1);
    expect(await value(metrics.agentTurns, { outcome: 'failed', brain: 'llm' })).toBe(before + 1);
  });

  it('counts limiter refusals by bucket', async ({ agent: env }) => {
    const { token } = await env.tenant();
    const before = await value(metrics.rateLimitRefusals, { bucket: 'reads' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await env.api().get('/api/v1/me').set(auth(token))).status);
    const refused = statuses.filter((s) => s === 429).length;
    expect(refused).toBeGreaterThanOrEqual(2);
    expect(await value(metrics.rateLimitRefusals, { bucket: 'reads' })).toBe(before + refused);
  });

  it('counts webhook deliveries by outcome', async ({ agent: env }) => {
    const { accountId } = await env.tenant();
    const hook = await buildHook(env.deps, accountId);
    expect((await env.api().post(hook.path).send({ signup: 'x' })).status).toBe(202);
    expect(
      (
        await env
          .api()
          .post(`${hook.path.slice(0, -4)}zzzz`)
          .send({ signup: 'x' })
      ).status,
    ).toBe(404);
    expect(await value(metrics.webhookDeliveries, { outcome: 'accepted' })).toBe(1);
    expect(await value(metrics.webhookDeliveries, { outcome: 'unknown_hook' })).toBe(1);
  });

  it('samples the age of the oldest send whose answer was lost', async ({ agent: env }) => {
    const { accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    const id = newId('send');
    const at = Date.now() - 120_000;
    // A send left pending two minutes ago: older than the service writes one, so seeded as the row itself.
    await env.deps.db('shipments').insert({
      id,
      account_id: accountId,
      card_id: card.id,
      idempotency_key: `mail-${id}`,
      status: 'pending',
      to_address: 'jane@acme.test',
      subject: 's',
      body: 'b',
      decided_by: 'person',
      kind_of_work: 'email',
      created_at: at,
      updated_at: at,
    });
    await sampleOnce({ ...env.deps, oldestLostAnswer: () => fencesRepository(env.deps.db).oldestLostAnswer() }, createLogger('silent'));
    const age = await value(metrics.deliveryPendingOldest);
    expect(age).toBeGreaterThanOrEqual(120);
    expect(age).toBeLessThan(180);
    expect(await value(metrics.queueJobs, { queue: 'agent-turns', state: 'completed' })).toBeGreaterThanOrEqual(0);
    expect((await metrics.queueJobs.get()).values.filter((v) => v.labels.queue === 'agent-turns')).toHaveLength(5);
  });

  it('counts inbound mail by the class it settles as', async ({ agent: env }) => {
    const settledAs: string[] = [];
    const { accountId } = await env.tenant();
    for (const name of ['malformed-mime', 'gmail-reply', 'gmail-reply']) {
      const id = newId('im');
      const raw = mailFixture(name);
      await inboundRepository(env.deps.db).insert({
        id,
        accountId,
        via: 'smtp',
        mailFrom: null,
        rcptTo: [],
        raw,
        receivedAt: Date.now(),
      });
      await processInbound(env.deps, id);
      settledAs.push((await inboundRepository(env.deps.db).find(id))!.status);
    }
    expect(settledAs[1]).toBe('unplaced');
    for (const cls of new Set(settledAs))
      expect(await value(metrics.inboundMail, { class: cls })).toBe(settledAs.filter((c) => c === cls).length);
  });
});
