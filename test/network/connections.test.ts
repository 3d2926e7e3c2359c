import { createServer, type AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { openConnection } from '../../src/channels/connections.js';
import { providerBridge } from '../../src/channels/provider-http.js';
import { AnswerLost, NotShipped } from '../../src/channels/channel.types.js';
import { cannotShip } from '../../src/channels/registry.js';
import { createLogger } from '../../src/logger.js';
import { adminCall, envFor } from '../helpers/env.js';
import type { TestEnv } from '../helpers/fixture.js';
import { runTs } from '../helpers/processes.js';
import { capturedLines, withBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { overwrite } from '../helpers/row-setup.js';

const it = withBridge('sk_live_network_SECRET_1234');

const { lines, sink } = capturedLines();

it.override('options', { logger: createLogger('trace', sink) });

const SECRET = 'sk_live_network_SECRET_1234';

/** The URL of a loopback port nothing listens on (connection refused). */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
const connect = (env: TestEnv, bridge: ProviderBridgeStandIn, accountId: string, more: string[] = []) =>
  adminCall(env, ['channel', 'connect', '--account', accountId, '--kind', 'network', '--transport', 'http', '--url', bridge.url, ...more]);

describe('admin CLI: channel connect, list, disconnect', () => {
  it('connects the network, prints it without the key, and the account can ship network messages', async ({ env, bridge }) => {
    const t = await env.tenant();
    expect(await cannotShip(env.deps.db, t.accountId, 'network_message')).toBe(
      'network messages cannot ship: no professional-network connection on this account',
    );
    const out = await connect(env, bridge, t.accountId, ['--key', SECRET]);
    expect(out).toEqual({ out: { connection: { accountId: t.accountId, kind: 'network', transport: 'http', url: bridge.url } } });
    expect(await cannotShip(env.deps.db, t.accountId, 'network_message')).toBeNull();
    // Ads stay unconnected: that is another connection.
    expect(await cannotShip(env.deps.db, t.accountId, 'ad_test')).toMatch(/no ad-platform connection/);
    expect(await adminCall(env, ['channel', 'list', '--account', t.accountId])).toEqual({
      out: { connections: [{ accountId: t.accountId, kind: 'network', transport: 'http', url: bridge.url }] },
    });
    // Kept sealed: the row does not hold it in clear, and the adapter's read gives it back.
    const found = await row(env, 'provider_connections', { account_id: t.accountId });
    expect(JSON.stringify(found)).not.toContain(SECRET);
    expect((await openConnection(env.deps.db, env.config.sealing, t.accountId, 'network'))?.key).toBe(SECRET);
    // /results reports the network channel from now on.
    const results = await env.api().get('/api/v1/results').set(auth(t.token));
    expect(results.body.results.network.available).toBe(true);

    expect(await adminCall(env, ['channel', 'disconnect', '--account', t.accountId, '--kind', 'network'])).toEqual({ out: { ok: true } });
    expect(await adminCall(env, ['channel', 'list', '--account', t.accountId])).toEqual({ out: { connections: [] } });
    expect(await cannotShip(env.deps.db, t.accountId, 'network_message')).toMatch(/no professional-network connection/);
    expect(await adminCall(env, ['channel', 'disconnect', '--account', t.accountId, '--kind', 'network'])).toEqual({ error: 'not found' });

    const audit = await rows(env, 'audit_log', { account_id: t.accountId }).whereLike('route', 'channel %').orderBy('at');
    expect(audit.map((a) => a.route)).toEqual(['channel connect', 'channel disconnect']);
    expect(JSON.stringify(audit)).not.toContain(SECRET);
    expect(lines.join('')).not.toContain(SECRET);
  });

  it('keeps one connection per kind: ads beside network, and connecting again replaces url and key and restarts the cursor', async ({
    env,
    bridge,
  }) => {
    const t = await env.tenant();
    await connect(env, bridge, t.accountId, ['--key', SECRET]);
    await overwrite(env, 'provider_connections', { account_id: t.accountId }, { poll_cursor: '42' });
    const ads = ['channel', 'connect', '--account', t.accountId, '--kind', 'ads', '--transport', 'http'];
    expect(await adminCall(env, [...ads, '--url', 'https://ads-bridge.test/base/', '--key', 'ads-key'])).toEqual({
      out: { connection: { accountId: t.accountId, kind: 'ads', transport: 'http', url: 'https://ads-bridge.test/base' } },
    });
    const again = ['channel', 'connect', '--account', t.accountId, '--kind', 'network', '--transport', 'http'];
    await adminCall(env, [...again, '--url', 'https://other-bridge.test', '--key', 'new-key']);
    expect(await adminCall(env, ['channel', 'list', '--account', t.accountId])).toEqual({
      out: {
        connections: [
          { accountId: t.accountId, kind: 'ads', transport: 'http', url: 'https://ads-bridge.test/base' },
          { accountId: t.accountId, kind: 'network', transport: 'http', url: 'https://other-bridge.test' },
        ],
      },
    });
    expect(await openConnection(env.deps.db, env.config.sealing, t.accountId, 'network')).toMatchObject({
      key: 'new-key',
      pollCursor: null,
    });
    expect((await openConnection(env.deps.db, env.config.sealing, t.accountId, 'ads'))?.key).toBe('ads-key');
  });

  it('refuses bad input with one line naming the flag and the rule', async ({ env, bridge }) => {
    const t = await env.tenant();
    const base = ['channel', 'connect', '--account', t.accountId];
    const cases: [string[], string][] = [
      [[...base, '--kind', 'fax', '--transport', 'http', '--url', bridge.url, '--key', 'k'], '--kind must be one of network, ads'],
      [[...base, '--kind', 'network', '--transport', 'smtp', '--url', bridge.url, '--key', 'k'], '--transport must be one of http'],
      [
        [...base, '--kind', 'network', '--transport', 'http', '--url', 'not a url', '--key', 'k'],
        '--url must be an absolute http or https URL',
      ],
      [
        [...base, '--kind', 'network', '--transport', 'http', '--url', 'ftp://x.test', '--key', 'k'],
        '--url must be an absolute http or https URL',
      ],
      [
        [...base, '--kind', 'network', '--transport', 'http', '--url', 'https://u:p@x.test', '--key', 'k'],
        '--url must not carry credentials; give the key with --key',
      ],
      [
        [...base, '--kind', 'network', '--transport', 'http', '--url', 'https://x.test/?a=1', '--key', 'k'],
        '--url must not have a query or fragment',
      ],
      [
        [...base, '--kind', 'network', '--transport', 'http', '--url', bridge.url, '--key', 'a b'],
        '--key must be 1 to 4096 characters without spaces',
      ],
      [[...base, '--kind', 'network', '--transport', 'http', '--url', bridge.url], '--key is required'],
      [
        ['channel', 'connect', '--account', 'acct_missing', '--kind', 'network', '--transport', 'http', '--url', bridge.url, '--key', 'k'],
        'not found',
      ],
      [['channel', 'disconnect', '--account', t.accountId, '--kind', 'fax'], '--kind must be one of network, ads'],
      [['channel', 'list'], '--account is required'],
    ];
    for (const [argv, error] of cases) expect({ argv, ...(await adminCall(env, argv)) }).toEqual({ argv, error });
    expect(await rows(env, 'provider_connections', { account_id: t.accountId })).toEqual([]);
  });

  it('runs as the real CLI: one JSON object on stdout, a one-line error on stderr and exit 1; the key printed nowhere', async ({
    env,
    bridge,
  }) => {
    const t = await env.tenant();
    const argv = ['bin/admin.ts', 'channel', 'connect', '--account', t.accountId, '--kind', 'network', '--transport', 'http'];
    const ok = await runTs([...argv, '--url', bridge.url, '--key', SECRET], envFor(env.config));
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout.trim())).toEqual({
      connection: { accountId: t.accountId, kind: 'network', transport: 'http', url: bridge.url },
    });
    expect(ok.stdout + ok.stderr).not.toContain(SECRET);
    const bad = await runTs([...argv, '--url', 'nope', '--key', SECRET], envFor(env.config));
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr.trim().split('\n')).toEqual([JSON.stringify({ error: '--url must be an absolute http or https URL' })]);
    expect(bad.stderr).not.toContain(SECRET);
  }, 120_000);
});

describe('the provider bridge transport', () => {
  const work = {
    kind: 'network_message' as const,
    to: 'https://www.linkedin.com/in/ann',
    subject: 'Hi',
    body: 'Hello',
    details: { mode: 'message' },
  };
  const client = (bridge: ProviderBridgeStandIn, over: Partial<{ url: string; key: string; timeoutMs: number }> = {}) =>
    providerBridge({ url: bridge.url, key: SECRET, timeoutMs: 500, service: 'the network provider', ...over });

  it('ships with the key and the idempotency key, deduplicates a re-ship, and looks it up', async ({ bridge }) => {
    bridge.state.mode = 'accept';
    const first = await client(bridge).ship(work, 'key-a');
    const again = await client(bridge).ship(work, 'key-a');
    expect(again).toEqual(first);
    const tries = bridge.posts.filter((p) => p.key === 'key-a');
    expect(tries.map((p) => p.authorization)).toEqual([`Bearer ${SECRET}`, `Bearer ${SECRET}`]);
    expect(tries[0]!.body).toEqual(work);
    expect(bridge.shipments.filter((s) => s.key === 'key-a')).toHaveLength(1);
    expect(await client(bridge).lookup('key-a')).toEqual({ state: 'sent', providerId: first.providerId });
    expect(await client(bridge).lookup('key-none')).toEqual({ state: 'not_found' });
    expect(await client(bridge, { key: 'wrong' }).lookup('key-a')).toEqual({ state: 'unknown' });
  });

  it('tells a refusal for good, a refusal for now, an unreachable bridge and a lost answer apart', async ({ bridge }) => {
    bridge.state.mode = 'reject';
    await expect(client(bridge).ship(work, 'key-b')).rejects.toMatchObject({ name: 'NotShipped', permanent: true });
    bridge.state.mode = 'refuse';
    await expect(client(bridge).ship(work, 'key-b')).rejects.toMatchObject({ name: 'NotShipped', permanent: false });
    bridge.state.mode = 'drop-before';
    await expect(client(bridge).ship(work, 'key-b')).rejects.toBeInstanceOf(AnswerLost);
    expect(await client(bridge).lookup('key-b')).toEqual({ state: 'not_found' });
    bridge.state.mode = 'drop-after';
    await expect(client(bridge).ship(work, 'key-c')).rejects.toBeInstanceOf(AnswerLost);
    // A bridge that never answers: the client's own timeout gives up (a client without one would hang the test).
    bridge.state.mode = 'hang';
    await expect(client(bridge).ship(work, 'key-d')).rejects.toBeInstanceOf(AnswerLost);
    expect(await client(bridge).lookup('key-c')).toMatchObject({ state: 'sent' });
    expect(await client(bridge).lookup('key-d')).toMatchObject({ state: 'sent' });
    await expect(client(bridge, { url: await closedPort() }).ship(work, 'key-e')).rejects.toEqual(
      new NotShipped('the network provider could not be reached (ECONNREFUSED)'),
    );
    bridge.state.mode = 'accept';
  });

  it('pages through events from a cursor, at most `limit` at a time', async ({ bridge }) => {
    bridge.events.push(
      { id: 'e1', type: 'reply', at: 1, data: { profileUrl: 'https://www.linkedin.com/in/ann' } },
      { id: 'e2', type: 'accepted', at: 2, data: {} },
      { id: 'e3', type: 'reply', at: 3, data: {} },
    );
    const page = await client(bridge).poll(null, 2);
    expect(page.events.map((e) => e.id)).toEqual(['e1', 'e2']);
    expect(page.next).toBe('2');
    expect((await client(bridge).poll(page.next, 2)).events.map((e) => e.id)).toEqual(['e3']);
    bridge.events.length = 0;
  });
});
