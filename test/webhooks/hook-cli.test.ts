import { describe, expect } from 'vitest';
import { runAdmin } from '../../src/admin/commands.js';
import { listAudit } from '../../src/audit/audit.service.js';
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { runTs } from '../helpers/processes.js';
import { postJson } from './helpers.js';
import { row } from '../helpers/rows.js';

it.override('options', { env: { BASE_URL: 'https://agent.example.com' } });

const admin = (env: TestEnv, ...argv: string[]) => runAdmin(argv, { config: env.config, db: env.deps.db });
const refusal = (env: TestEnv, ...argv: string[]) =>
  admin(env, ...argv).then(
    () => {
      throw new Error('expected a refusal');
    },
    (err: { error?: string; message?: string; body?: () => Record<string, unknown> }) =>
      String(err.body?.().message ?? err.error ?? err.message),
  );
const pathOf = (url: string) => new URL(url).pathname;

describe('hook verbs of the admin CLI', () => {
  it('prints {"hookId","url"} once on create, as one JSON line, and refusals as {"error"} on stderr with exit 1', {
    timeout: 120_000,
  }, async ({ env }) => {
    const { accountId } = await env.tenant();
    const created = await runTs(['bin/admin.ts', 'hook', 'create', '--account', accountId, '--label', 'signup'], {
      ...envFor(env.config),
      BASE_URL: 'https://agent.example.com',
    });
    expect(created.code, created.stderr).toBe(0);
    const lines = created.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const out = JSON.parse(lines[0]!);
    expect(Object.keys(out)).toEqual(['hookId', 'url']);
    expect(out.url).toMatch(/^https:\/\/agent\.example\.com\/api\/webhook\/hook\/whk_[0-9A-Za-z]{40}$/);
    expect((await postJson(env, pathOf(out.url), { ok: 1 })).status).toBe(202);

    const bad = await runTs(['bin/admin.ts', 'hook', 'create', '--account', accountId, '--label', 'Sign Up'], envFor(env.config));
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(JSON.parse(bad.stderr.trim())).toEqual({ error: 'label must be 1 to 32 characters of lowercase letters, digits, - and _' });
  });

  it('creates, lists, disables, enables, regenerates and deletes hooks; the URL is never shown again', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { hookId, url } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'trial_users-2')) as {
      hookId: string;
      url: string;
    };
    const token = pathOf(url).split('/').pop()!;
    const listed = await admin(env, 'hook', 'list', '--account', accountId);
    expect(listed).toEqual({
      hooks: [{ hookId, label: 'trial_users-2', status: 'active', createdAt: expect.any(Number), lastDeliveryAt: null }],
    });
    expect(JSON.stringify(listed)).not.toContain(token.slice(4));

    expect(await admin(env, 'hook', 'disable', '--hook-id', hookId)).toEqual({ ok: true });
    expect((await postJson(env, pathOf(url), {})).status).toBe(404);
    expect(await admin(env, 'hook', 'disable', '--hook-id', hookId)).toEqual({ ok: true });
    expect(await admin(env, 'hook', 'enable', '--hook-id', hookId)).toEqual({ ok: true });
    expect((await postJson(env, pathOf(url), {})).status).toBe(202);

    const regenerated = (await admin(env, 'hook', 'regenerate', '--hook-id', hookId)) as { url: string };
    expect(Object.keys(regenerated)).toEqual(['url']);
    expect(regenerated.url).not.toBe(url);
    expect((await postJson(env, pathOf(url), {})).status).toBe(404);
    expect((await postJson(env, pathOf(regenerated.url), {})).status).toBe(202);

    expect(await admin(env, 'hook', 'delete', '--hook-id', hookId)).toEqual({ ok: true });
    expect((await postJson(env, pathOf(regenerated.url), {})).status).toBe(404);
    expect(await admin(env, 'hook', 'list', '--account', accountId)).toEqual({ hooks: [] });
    expect((await listAudit(env.deps.db, accountId, 20)).map((e) => e.route).filter((r) => r.startsWith('hook'))).toEqual([
      'hook delete',
      'hook regenerate',
      'hook enable',
      'hook disable',
      'hook disable',
      'hook create',
    ]);
  });

  it('refuses a bad label, a 21st active hook, unknown ids and accounts', async ({ env }) => {
    const { accountId } = await env.tenant();
    expect(await refusal(env, 'hook', 'create', '--account', accountId, '--label', 'x'.repeat(33))).toMatch(/at most 32|1 to 32/);
    expect(await refusal(env, 'hook', 'create', '--account', accountId, '--label', 'UPPER')).toMatch(/lowercase/);
    expect(await refusal(env, 'hook', 'create', '--account', accountId, '--label', '')).toMatch(/--label is required/);
    expect(await refusal(env, 'hook', 'create', '--account', 'acct_missing', '--label', 'ok')).toBe('not found');
    const ids: string[] = [];
    for (let i = 0; i < 20; i++)
      ids.push(((await admin(env, 'hook', 'create', '--account', accountId, '--label', `h${i}`)) as { hookId: string }).hookId);
    expect(await refusal(env, 'hook', 'create', '--account', accountId, '--label', 'h20')).toBe(
      'account already has 20 active hooks; disable or delete one first',
    );
    // Disabled hooks do not count; enabling one back over the limit is refused.
    await admin(env, 'hook', 'disable', '--hook-id', ids[0]!);
    await admin(env, 'hook', 'create', '--account', accountId, '--label', 'h20');
    expect(await refusal(env, 'hook', 'enable', '--hook-id', ids[0]!)).toBe(
      'account already has 20 active hooks; disable or delete one first',
    );
    for (const verb of ['disable', 'enable', 'regenerate', 'delete', 'deliveries'])
      expect(await refusal(env, 'hook', verb, '--hook-id', 'hook_nope')).toBe('not found');
    expect(await refusal(env, 'hook', 'replay', '--delivery-id', 'dlv_nope')).toBe('not found');
    expect(await refusal(env, 'hook', 'deliveries', '--hook-id', ids[1]!, '--limit', '0')).toMatch(/--limit must be an integer/);
  });

  it('lists deliveries newest first with outcome and bytes, and replays one through the limits', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { hookId, url } = (await admin(env, 'hook', 'create', '--account', accountId, '--label', 'signup')) as {
      hookId: string;
      url: string;
    };
    const first = await postJson(env, pathOf(url), { n: 1 });
    await postJson(env, pathOf(url), { n: 22 });
    const { deliveries } = (await admin(env, 'hook', 'deliveries', '--hook-id', hookId, '--limit', '1')) as {
      deliveries: Record<string, unknown>[];
    };
    expect(deliveries).toEqual([
      {
        deliveryId: expect.stringMatching(/^dlv_/),
        at: expect.any(Number),
        outcome: 'Accepted',
        bytes: 8,
        replayOf: null,
        agent: expect.objectContaining({ made: 'nothing yet' }),
      },
    ]);
    const replayed = (await admin(env, 'hook', 'replay', '--delivery-id', first.body.deliveryId)) as {
      deliveryId: string;
      outcome: string;
    };
    expect(replayed).toEqual({ deliveryId: expect.stringMatching(/^dlv_/), outcome: 'Accepted' });
    const after = (await admin(env, 'hook', 'deliveries', '--hook-id', hookId)) as {
      deliveries: { deliveryId: string; replayOf: string | null; bytes: number }[];
    };
    expect(after.deliveries).toHaveLength(3);
    expect(after.deliveries.find((d) => d.deliveryId === replayed.deliveryId)).toMatchObject({ replayOf: first.body.deliveryId, bytes: 7 });
    const delivery = await row(env, 'webhook_deliveries', { id: replayed.deliveryId });
    expect(delivery.body).toBe('{"n":1}');
  });
});
