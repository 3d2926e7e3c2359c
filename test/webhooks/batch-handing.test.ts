import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { handDeliveries } from '../../src/webhooks/events.service.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';
import { makeHook, postJson } from './helpers.js';
import { setupHookWorld, type HookWorld } from './helpers-agent.js';
import { row, rows } from '../helpers/rows.js';
import { seedRows } from '../helpers/row-setup.js';

const log = createLogger('silent');

/** `n` accepted deliveries of one hook, as intake logs them (their jobs are not queued). */
async function logged(env: TestEnv, accountId: string, hookId: string, n: number, tag: string) {
  const deliveries = Array.from({ length: n }, (_, i) => {
    const body = JSON.stringify({ tag, seq: i, email: `person${i}@example.com` });
    return {
      id: `dlv_${tag}${String(i).padStart(4, '0')}`,
      account_id: accountId,
      hook_id: hookId,
      at: Date.now() + i,
      outcome: 'Accepted',
      bytes: body.length,
      body,
    };
  });
  await seedRows(env, 'webhook_deliveries', deliveries);
  return deliveries;
}

describe('handing deliveries over in batches', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setupTestEnv();
  });
  afterAll(() => env.close());

  it('hands each of many deliveries of one account to exactly one turn, however the batches overlap and repeat', async () => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'burst');
    const burst = await logged(env, accountId, hook.hookId, 200, 'burst');
    const ids = burst.map((r) => r.id);
    // Four batches at once, overlapping, one of them everything: as if jobs ran twice on two workers.
    const answers = await Promise.all([
      handDeliveries(env.deps, ids.slice(0, 150), log),
      handDeliveries(env.deps, ids.slice(100), log),
      handDeliveries(env.deps, [...ids].reverse(), log),
      handDeliveries(
        env.deps,
        ids.filter((_, i) => i % 3 === 0),
        log,
      ),
    ]);
    for (const id of ids) {
      const outcomes = answers.filter((a) => a.has(id)).map((a) => a.get(id));
      expect(
        outcomes.filter((o) => o === 'handed'),
        id,
      ).toHaveLength(1);
      expect(outcomes.filter((o) => o !== 'handed').every((o) => o === 'already handed')).toBe(true);
    }
    const deliveries = await rows(env, 'webhook_deliveries').whereIn('id', ids);
    const turns = await rows(env, 'agent_turns', { account_id: accountId });
    expect(turns).toHaveLength(200);
    expect(new Set(deliveries.map((d) => d.turn_id)).size).toBe(200);
    // Every turn carries its own delivery's payload, labelled with the hook, queued for the agent.
    const byId = new Map(turns.map((t) => [t.id, t]));
    for (const d of deliveries) {
      const turn = byId.get(d.turn_id)!;
      expect(turn).toMatchObject({
        kind: 'event',
        origin: 'hook',
        status: 'queued',
        data: { label: 'burst', content: JSON.parse(d.body) },
      });
    }
    // The account's turns are queued through the agent's drain; a repeat asks for the drain again.
    const drains = await env.deps.queues.get('agent-turns')!.getJobs(['waiting', 'delayed', 'prioritized'], 0, -1);
    expect(drains.some((j) => j.data.accountId === accountId)).toBe(true);
    const again = await handDeliveries(env.deps, ids.slice(0, 5), log);
    expect([...again.values()]).toEqual(Array(5).fill('already handed'));
    expect(await rows(env, 'agent_turns', { account_id: accountId })).toHaveLength(200);
  });

  it('fails only the delivery that cannot be handed over; the rest of its batch is handed', async () => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'mixed');
    const [good1, good2] = await logged(env, accountId, hook.hookId, 2, 'mixed');
    // A row no intake could write (its body is not JSON), and one that was rate limited.
    await seedRows(env, 'webhook_deliveries', [
      { id: 'dlv_mixedbroken', account_id: accountId, hook_id: hook.hookId, at: Date.now(), outcome: 'Accepted', bytes: 2, body: '{x' },
      {
        id: 'dlv_mixedlimited',
        account_id: accountId,
        hook_id: hook.hookId,
        at: Date.now(),
        outcome: 'Rate Limited',
        bytes: 2,
        body: null,
      },
    ]);
    const answers = await handDeliveries(env.deps, [good1!.id, 'dlv_mixedbroken', good2!.id, 'dlv_mixedlimited', 'dlv_unknown'], log);
    expect(answers.get(good1!.id)).toBe('handed');
    expect(answers.get(good2!.id)).toBe('handed');
    expect(answers.get('dlv_mixedbroken')).toBeInstanceOf(Error);
    expect(answers.get('dlv_mixedlimited')).toBe('not handed');
    expect(answers.get('dlv_unknown')).toBe('not handed');
    const broken = await row(env, 'webhook_deliveries', { id: 'dlv_mixedbroken' });
    expect(broken).toMatchObject({ outcome: 'Accepted', turn_id: null });
    expect(await rows(env, 'agent_turns', { account_id: accountId })).toHaveLength(2);
  });
});

describe('a burst of deliveries through the webhook-events and agent-turns pools', () => {
  let world: HookWorld;
  beforeAll(async () => {
    world = await setupHookWorld({ AGENT_BRAIN: 'offline' });
  });
  afterAll(() => world.close());

  it('runs every delivery of the burst once, as its own event turn', async () => {
    const { accountId } = await world.tenant();
    const hook = await makeHook(world, accountId, 'burst');
    const posted = await Promise.all(Array.from({ length: 60 }, (_, i) => postJson(world, hook.path, { seq: i })));
    expect(posted.map((r) => r.status)).toEqual(Array(60).fill(202));
    const turns = await Promise.all(posted.map((r) => world.settled(r.body.deliveryId, 60_000)));
    expect(turns.map((t) => t.status)).toEqual(Array(60).fill('replied'));
    expect(new Set(turns.map((t) => t.id)).size).toBe(60);
    expect(turns.map((t) => (t.data as { content: { seq: number } }).content.seq).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 60 }, (_, i) => i),
    );
    expect(await rows(world, 'agent_turns', { account_id: accountId })).toHaveLength(60);
  });
});
