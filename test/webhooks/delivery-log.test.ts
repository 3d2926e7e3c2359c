import { describe, expect } from 'vitest';
import { listAudit } from '../../src/audit/audit.service.js';
import type { Actor } from '../../src/audit/audit.service.js';
import { DELIVERY_PREVIEW_CHARS, deliveryPage } from '../../src/webhooks/delivery-log.js';
import { disableHook, regenerateHook, replayDelivery } from '../../src/webhooks/webhooks.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { makeHook, postJson } from './helpers.js';

// The dashboard's read of a hook's delivery log (src/webhooks/delivery-log.ts) and the hook verbs acting for
// a person of one account: pages, the outcome filter, the bounded preview, and another account's hook unseen.

it.override('options', { env: { WEBHOOK_HOOK_PER_HOUR: '4', WEBHOOK_ACCOUNT_PER_HOUR: '1000' } });

const page = async (
  env: TestEnv,
  accountId: string,
  hookId: string,
  o: { outcome?: 'accepted' | 'rate_limited' | 'worker_error'; cursor?: string; limit?: number },
) =>
  deliveryPage(env.deps.db, await env.deps.cursorSecret(), accountId, hookId, {
    outcome: o.outcome ?? null,
    cursor: o.cursor ?? null,
    limit: o.limit ?? 50,
  });

/** A person of the account as the dashboard would audit them (the shape the audit log takes today). */
const person = (accountId: string, route: string): Actor => ({
  accountId,
  actor: 'admin',
  tokenId: null,
  tokenLabel: null,
  method: 'DASHBOARD',
  route,
});

describe('delivery log pages', () => {
  it('pages newest first with a signed cursor, filters by outcome, and cuts each body to the preview length', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { hookId, path } = await makeHook(env, accountId);
    const long = { text: 'x'.repeat(2000) };
    const statuses: number[] = [];
    for (const body of [{ n: 1 }, { n: 2 }, { n: 3 }, long, { n: 5 }, { n: 6 }]) statuses.push((await postJson(env, path, body)).status);
    expect(statuses).toEqual([202, 202, 202, 202, 429, 429]);

    const all = await page(env, accountId, hookId, {});
    // Four accepted rows and one refusals row standing for both refused deliveries of that minute.
    expect(all.items.map((d) => d.outcome).sort()).toEqual(['accepted', 'accepted', 'accepted', 'accepted', 'rate_limited']);
    expect(all.nextCursor).toBeNull();
    const limited = all.items.find((d) => d.outcome === 'rate_limited')!;
    expect(limited).toMatchObject({ preview: null, count: 2, sizeBytes: 7 });
    const big = all.items.find((d) => d.sizeBytes === JSON.stringify(long).length)!;
    expect(big.preview).toBe(JSON.stringify(long).slice(0, DELIVERY_PREVIEW_CHARS));
    expect(all.items.find((d) => d.preview === '{"n":1}')).toMatchObject({ outcome: 'accepted', replayOf: null, count: 1, error: null });

    const accepted: string[] = [];
    let cursor: string | undefined;
    for (let i = 0; i < 10; i++) {
      const p = await page(env, accountId, hookId, { outcome: 'accepted', limit: 3, cursor });
      accepted.push(...p.items.map((d) => d.id));
      if (!p.nextCursor) break;
      cursor = p.nextCursor;
    }
    expect(accepted).toEqual(all.items.filter((d) => d.outcome === 'accepted').map((d) => d.id));
    const times = all.items.map((d) => d.receivedAt);
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect((await page(env, accountId, hookId, { outcome: 'worker_error' })).items).toEqual([]);
  });

  it("refuses a cursor of another filter, and answers another account's hook as not found", async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const { hookId, path } = await makeHook(env, a.accountId);
    for (const n of [1, 2]) await postJson(env, path, { n });
    const first = await page(env, a.accountId, hookId, { limit: 1 });
    expect(first.nextCursor).toEqual(expect.any(String));
    await expect(page(env, a.accountId, hookId, { limit: 1, outcome: 'accepted', cursor: first.nextCursor! })).rejects.toMatchObject({
      error: 'cursor is not valid',
    });
    await expect(page(env, b.accountId, hookId, {})).rejects.toMatchObject({ status: 404 });
  });
});

describe('hook verbs for a person of one account', () => {
  it('replays a delivery as a new one marked as the replay, audited as the person, and never across accounts', async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const { hookId, path } = await makeHook(env, a.accountId);
    const sent = await postJson(env, path, { lead: 'acme.com' });
    const deliveryId = sent.body.deliveryId as string;
    await expect(replayDelivery(env.deps, deliveryId, { actor: person(b.accountId, 'replayHookDelivery'), hookId })).rejects.toMatchObject({
      status: 404,
    });
    const other = await makeHook(env, a.accountId, 'other');
    await expect(
      replayDelivery(env.deps, deliveryId, { actor: person(a.accountId, 'replayHookDelivery'), hookId: other.hookId }),
    ).rejects.toMatchObject({ status: 404 });

    const replayed = await replayDelivery(env.deps, deliveryId, { actor: person(a.accountId, 'replayHookDelivery'), hookId });
    const log = await page(env, a.accountId, hookId, {});
    expect(log.items[0]).toMatchObject({
      id: replayed.deliveryId,
      outcome: 'accepted',
      replayOf: deliveryId,
      preview: '{"lead":"acme.com"}',
    });
    const audit = await listAudit(env.deps.db, a.accountId, 10);
    expect(audit.find((e) => e.targetId === replayed.deliveryId)).toMatchObject({ route: 'replayHookDelivery', method: 'DASHBOARD' });
  });

  it("leaves another account's hook untouched: disable and regenerate answer not found", async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const { hookId, path } = await makeHook(env, a.accountId);
    await expect(disableHook(env.deps, hookId, person(b.accountId, 'disableHook'))).rejects.toMatchObject({ status: 404 });
    await expect(regenerateHook(env.deps, env.config.baseUrl, hookId, person(b.accountId, 'regenerateHook'))).rejects.toMatchObject({
      status: 404,
    });
    expect((await postJson(env, path, { still: 'live' })).status).toBe(202);
  });
});
