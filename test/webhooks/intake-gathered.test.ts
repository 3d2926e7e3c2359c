import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect } from 'vitest';
import { pendingJob } from '../../src/jobs/registry.js';
import { webhookEvent } from '../../src/jobs/webhook-events.js';
import { liveHooks } from '../../src/webhooks/live-hooks.js';
import { it } from '../helpers/fixture.js';
import { makeHook } from './helpers.js';
import { row, rows } from '../helpers/rows.js';

let server: http.Server;
let base: string;
it.override('options', { env: { WEBHOOK_HOOK_PER_HOUR: '10', WEBHOOK_ACCOUNT_PER_HOUR: '1000' } });
it.beforeAll(async ({ env }) => {
  server = http.createServer(env.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** POSTs at once on one server, so the intake gathers them into shared statements. */
async function postAll(paths: string[]) {
  return Promise.all(
    paths.map(async (path, i) => {
      const res = await fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ i }),
      });
      return {
        path,
        i,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as Record<string, unknown>,
      };
    }),
  );
}

describe('POSTs arriving together', () => {
  it('answers each on its own: 202 for its own logged and queued delivery, 429 over the limit, 404 for a dead URL', async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const hookA = await makeHook(env, a.accountId, 'busy');
    const hookB = await makeHook(env, b.accountId, 'other');
    await liveHooks(env.deps).ready();
    const unknown = `/api/webhook/hook/whk_${'C'.repeat(40)}`;
    const paths = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? hookB.path : i % 3 === 1 ? hookA.path : unknown)).concat(
      Array(10).fill(hookA.path),
    );
    const answers = await postAll(paths);

    const onA = answers.filter((r) => r.path === hookA.path);
    expect(onA.filter((r) => r.status === 202)).toHaveLength(10);
    const limited = onA.filter((r) => r.status === 429);
    expect(limited).toHaveLength(onA.length - 10);
    for (const r of limited) expect(Number(r.retryAfter)).toBeGreaterThan(0);
    expect(answers.filter((r) => r.path === hookB.path).map((r) => r.status)).toEqual(Array(10).fill(202));
    for (const r of answers.filter((x) => x.path === unknown)) expect(r).toMatchObject({ status: 404, body: { error: 'not found' } });

    // Every 202 names its own delivery: logged Accepted with the body that request sent, its job queued.
    const queue = env.deps.queues.get('webhook-events')!;
    for (const r of answers.filter((x) => x.status === 202)) {
      const delivery = await row(env, 'webhook_deliveries', { id: r.body.deliveryId as string });
      expect(delivery).toMatchObject({
        outcome: 'Accepted',
        body: JSON.stringify({ i: r.i }),
        hook_id: r.path === hookA.path ? hookA.hookId : hookB.hookId,
      });
      expect((await pendingJob(queue, webhookEvent.key({ deliveryId: delivery.id })))?.data).toEqual({ deliveryId: delivery.id });
    }
    // Every delivery to a live URL is logged with its outcome: refused ones are counted on the hook's
    // row for their minute (at most two minutes here), which keeps no body.
    const logA = await rows(env, 'webhook_deliveries', { hook_id: hookA.hookId });
    expect(logA.filter((d) => d.outcome === 'Accepted')).toHaveLength(10);
    const refusals = logA.filter((d) => d.outcome === 'Rate Limited');
    expect(refusals.length).toBeLessThanOrEqual(2);
    expect(refusals.reduce((n, d) => n + d.deliveries, 0)).toBe(limited.length);
    for (const d of refusals) expect(d.body).toBeNull();
    expect(await rows(env, 'webhook_deliveries', { hook_id: hookB.hookId, outcome: 'Accepted' })).toHaveLength(10);
  });
});
