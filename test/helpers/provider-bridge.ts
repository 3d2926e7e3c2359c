import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { connectProvider, type ConnectionKind } from '../../src/channels/connections.js';
import type { TestEnv } from './env.js';
import { it } from './fixture.js';

/** Shipping tests against a bridge: short timeouts and a quick reconciliation, so lost answers settle fast. */
export const BRIDGE_SHIP_ENV = {
  MAIL_SEND_TIMEOUT_MS: '1000',
  MAIL_RECONCILE_DELAY_MS: '100',
  MAIL_RECONCILE_WINDOW_MS: '2000',
  MAIL_RETRY_AFTER_SECONDS: '1',
};

/**
 * Settings of the kill -9 tests of provider ships (network, ad tests, spend): a lost answer after 1 s,
 * reconciled quickly by the shipping sweep of a surviving process, and no card sweep in the way.
 */
export const KILL_SHIP_ENV = {
  MAIL_SEND_TIMEOUT_MS: '1000',
  MAIL_RECONCILE_DELAY_MS: '100',
  MAIL_RECONCILE_WINDOW_MS: '20000',
  MAIL_SWEEP_MS: '250',
  CARD_SWEEP_MS: '600000',
};

/** Every log line written to `sink` (give it to createLogger('trace', sink)), to check a secret is in none. */
export function capturedLines(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, sink };
}

/** A new account (all-scopes token) connected to `bridge` for `kind`. */
export async function connectedTenant(env: TestEnv, bridge: { url: string; key: string }, kind: ConnectionKind) {
  const t = await env.tenant();
  await connectProvider(
    env.deps.db,
    env.config.sealing,
    { accountId: t.accountId, kind, transport: 'http', url: bridge.url, key: bridge.key },
    Date.now(),
  );
  return t;
}

export interface BridgeShipment {
  id: string;
  key: string;
  body: { kind: string; to: string; subject: string; body: string; details: Record<string, unknown> };
}

/**
 * A local provider bridge speaking the contract of docs/provider-bridge.md (src/channels/provider-http.ts),
 * deduplicating on Idempotency-Key. `mode`: `accept`; `refuse` answers 503 without taking the work;
 * `reject` answers 422 (a refusal for good); `drop-before` destroys the socket without taking it;
 * `drop-after` takes it then destroys the socket (answer lost); `hang` takes it and never answers (the
 * caller times out). `events` is what `GET /v1/events` pages through (the cursor is an index).
 */
export async function startProviderBridge(key = 'bridge-key') {
  const shipments: BridgeShipment[] = [];
  /** Every POST as it arrived, taken or not, with its Authorization header. */
  const posts: { key: string; authorization: string; body: BridgeShipment['body'] }[] = [];
  const events: { id: string; type: string; at: number; data: Record<string, unknown> }[] = [];
  const state = {
    mode: 'accept' as 'accept' | 'refuse' | 'reject' | 'drop-before' | 'drop-after' | 'hang',
    /** How long a taken shipment waits for its answer (a worker killed meanwhile loses it). */
    delayMs: 0,
    /** Answer the event polls with this status instead (a failing provider). */
    eventsStatus: 200,
    /** Answer lookups with this status instead (a bridge that cannot tell: the service asks a person). */
    lookupStatus: 0,
    polls: 0,
  };
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${key}`) return json(res, 401, { error: 'unauthorized' });
    const url = new URL(req.url ?? '/', 'http://bridge');
    if (req.method === 'GET' && url.pathname.startsWith('/v1/ship/')) {
      if (state.lookupStatus) return json(res, state.lookupStatus, { error: 'lookup unavailable' });
      const k = decodeURIComponent(url.pathname.slice('/v1/ship/'.length));
      const found = shipments.find((s) => s.key === k);
      return json(res, found ? 200 : 404, found ? { id: found.id } : { error: 'not found' });
    }
    if (req.method === 'GET' && url.pathname === '/v1/events') {
      state.polls++;
      if (state.eventsStatus !== 200) return json(res, state.eventsStatus, { error: 'failing' });
      const from = Number(url.searchParams.get('after') ?? '0');
      const limit = Number(url.searchParams.get('limit') ?? '100');
      const page = events.slice(from, from + limit);
      return json(res, 200, { events: page, next: String(from + page.length) });
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const idem = String(req.headers['idempotency-key'] ?? '');
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as BridgeShipment['body'];
      posts.push({ key: idem, authorization: String(req.headers.authorization), body });
      if (state.mode === 'drop-before') return req.socket.destroy();
      if (state.mode === 'refuse') return json(res, 503, { error: 'unavailable' });
      if (state.mode === 'reject') return json(res, 422, { error: 'invalid', message: 'that profile cannot be messaged' });
      let s = shipments.find((m) => m.key === idem);
      if (!s) {
        s = { id: `net-${shipments.length + 1}`, key: idem, body };
        shipments.push(s);
      }
      if (state.mode === 'drop-after') return req.socket.destroy();
      if (state.mode === 'hang') return;
      const id = s.id;
      setTimeout(() => json(res, 201, { id }), state.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    key,
    shipments,
    posts,
    events,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export type ProviderBridgeStandIn = Awaited<ReturnType<typeof startProviderBridge>>;

/**
 * The shared fixture with a provider bridge stand-in of the file's own (`bridge`, holding `key`), made the first
 * time a hook or test asks for it and closed after the file's last test.
 */
export function withBridge(key?: string) {
  return it.extend('bridge', { scope: 'file' }, async ({}, { onCleanup }) => {
    const bridge = await startProviderBridge(key);
    onCleanup(() => bridge.close());
    return bridge;
  });
}
