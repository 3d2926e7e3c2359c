import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { createApp } from '../api/app.js';
import { routes } from '../api/routes/index.js';
import { createAccount } from '../src/accounts/accounts.service.js';
import { connectProvider } from '../src/channels/connections.js';
import { providerBridge } from '../src/channels/provider-http.js';
import { configWith } from '../test/helpers/config.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { createDeps } from '../src/deps.js';
import { createLogger } from '../src/logger.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { benchCard, fmt, pool, NO_RATE_LIMITS } from './lib.js';
import type { BenchContext, Section } from './run.js';

/** A provider bridge on loopback (docs/provider-bridge.md) that takes everything, deduplicating on the key. */
async function startBridge(key: string) {
  const taken = new Map<string, string>();
  const server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${key}`) {
      res.writeHead(401).end();
      return;
    }
    req.resume();
    req.on('end', () => {
      const idem = String(req.headers['idempotency-key'] ?? '');
      if (!taken.has(idem)) taken.set(idem, `net-${taken.size + 1}`);
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: taken.get(idem) }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, taken, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * Network messages shipped per second: `POST /review/{id}/answer` approve (block-list check, claim +
 * fence in Postgres, the connection's key unsealed, POST /v1/ship to the bridge, settle + channel
 * event) beside a bare loop of the same HTTP transport to the same bridge.
 * Run alone with `npx tsx bench/network-ship.bench.ts`.
 */
export async function networkShip(ctx: BenchContext): Promise<Section> {
  const key = 'bench-bridge-key';
  const bridge = await startBridge(key);
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    LOG_LEVEL: 'silent',
    ...NO_RATE_LIMITS,
  });
  await ensureDatabase(config.databaseUrl);
  const deps = createDeps(config, createLogger('silent'));
  await deps.ready();
  await migrate(deps.db);
  const account = await createAccount(deps.db, 'Network bench');
  await connectProvider(
    deps.db,
    config.sealing,
    { accountId: account.id, kind: 'network', transport: 'http', url: bridge.url, key },
    Date.now(),
  );
  const { token } = await mintToken(deps.db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:write'] });
  const app = createApp(deps, routes);
  const n = Math.max(200, ctx.seconds * 100);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      await benchCard(deps.db, account.id, 'network_message', {
        work: 'network_message',
        to: `https://www.linkedin.com/in/p${i}`,
        draft: { body: 'Hello from the benchmark.' },
      }),
    );
  }
  const client = providerBridge({ url: bridge.url, key, timeoutMs: 15_000, service: 'the network provider' });
  const bare = await pool(
    ids.map((_, i) => i),
    10,
    async (i) => {
      const work = { kind: 'network_message' as const, to: `https://www.linkedin.com/in/b${i}`, subject: 'bare', body: 'x', details: {} };
      await client.ship(work, `bare-${i}`);
    },
  );
  const fenced = await pool(ids, 10, async (id) => {
    const res = await request(app).post(`/api/v1/review/${id}/answer`).set('Authorization', `Bearer ${token}`).send({ action: 'approve' });
    if (res.status !== 200) throw new Error(`approve answered ${res.status}`);
  });
  await deps.close();
  await bridge.close();
  return {
    title: 'Network messages (POST /review/{id}/answer approve through the provider bridge on loopback)',
    body: [
      `${n} distinct network cards, 10 in flight, ${bridge.taken.size} shipments taken (expected ${2 * n}).`,
      '',
      '| Path | ships/s |',
      '|---|---|',
      `| bare provider-bridge transport (POST /v1/ship) | ${fmt(bare)} |`,
      `| fenced approve (auth, limiter, block list, fence, key unsealed, POST /v1/ship, settle, channel event) | ${fmt(fenced)} |`,
      `| ratio | ${fmt(fenced / bare, 2)} |`,
    ].join('\n'),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { urlFor } = await import('./urls.js');
  const section = await networkShip({ databaseUrl: urlFor('growth_agent_bench_network'), seconds: 2, rounds: 1 });
  process.stdout.write(`## ${section.title}\n\n${section.body}\n`);
}
