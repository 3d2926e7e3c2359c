import { request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { buildCard } from '../helpers/factories.js';
import { signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { until, waitFor } from '../helpers/processes.js';

let server: Server;
it.override('options', { env: { LIVE_STREAMS_PER_SESSION: '2', LIVE_HEARTBEAT_MS: '300' } });
it.beforeAll(async ({ env }) => {
  server = env.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return () => new Promise<void>((r) => server.close(() => r()));
});

interface SseEvent {
  id: string | null;
  event: string;
  data: Record<string, unknown>;
}

/** An open GET /dashboard/api/review/stream over a real socket: its status, headers and the events read so far. */
function openStream(cookie: string, lastEventId?: string) {
  return new Promise<{ res: IncomingMessage; events: SseEvent[]; body: () => string; close(): void }>((resolve, reject) => {
    const { port } = server.address() as AddressInfo;
    const req = httpRequest(
      {
        port,
        host: '127.0.0.1',
        path: '/dashboard/api/review/stream',
        headers: { Cookie: cookie, Accept: 'text/event-stream', ...(lastEventId ? { 'Last-Event-ID': lastEventId } : {}) },
      },
      (res) => {
        const events: SseEvent[] = [];
        let text = '';
        let pending = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
          pending += chunk;
          let end = pending.indexOf('\n\n');
          while (end !== -1) {
            const block = pending.slice(0, end);
            pending = pending.slice(end + 2);
            const fields = new Map<string, string>();
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const at = line.indexOf(': ');
              if (at > 0) fields.set(line.slice(0, at), line.slice(at + 2));
            }
            if (fields.has('event'))
              events.push({ id: fields.get('id') ?? null, event: fields.get('event')!, data: JSON.parse(fields.get('data') ?? '{}') });
            end = pending.indexOf('\n\n');
          }
        });
        res.on('error', () => {});
        resolve({ res, events, body: () => text, close: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('GET /dashboard/api/review/stream', () => {
  it('shows a card the service files on an open stream, and a person’s decision with their name', async ({ env }) => {
    const ana = await signedIn(env, { name: 'Ana Lima' });
    const stream = await openStream(ana.cookie);
    try {
      expect(stream.res.statusCode).toBe(200);
      expect(stream.res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(stream.res.headers['cache-control']).toBe('no-store');
      await until(async () => stream.events.find((e) => e.event === 'ready'));
      const card = await buildCard(env.deps.db, ana.accountId, 'plain');
      const filed = await until(async () => stream.events.find((e) => e.event === 'card.filed'));
      expect(filed.data).toMatchObject({ cardId: card.id, status: 'pending', kind: 'approval', decided: false });
      expect(filed.id).toMatch(/^\d+-\d+$/);

      const dismissed = await ana.request('post', `/dashboard/api/v1/review/${card.id}/dismiss`, { reason: 'not now' });
      expect(dismissed.status).toBe(200);
      const updated = await until(async () => stream.events.find((e) => e.event === 'card.updated'));
      expect(updated.data).toMatchObject({ cardId: card.id, status: 'dismissed', decided: true, by: 'Ana Lima' });
      // Another account's cards never reach this stream.
      const other = await signedIn(env);
      await buildCard(env.deps.db, other.accountId, 'plain');
      await until(async () => stream.body().includes(': heartbeat'));
      expect(stream.events.filter((e) => e.event.startsWith('card.')).map((e) => e.data.cardId)).toEqual([card.id, card.id]);
    } finally {
      stream.close();
    }
  });

  it('catches a reconnecting reader up from Last-Event-ID', async ({ env }) => {
    const ana = await signedIn(env);
    const first = await openStream(ana.cookie);
    const a = await buildCard(env.deps.db, ana.accountId, 'plain');
    const seen = await until(async () => first.events.find((e) => e.event === 'card.filed'));
    expect(seen.data.cardId).toBe(a.id);
    first.close();

    const b = await buildCard(env.deps.db, ana.accountId, 'plain');
    const c = await buildCard(env.deps.db, ana.accountId, 'question');
    const again = await openStream(ana.cookie, seen.id!);
    try {
      await until(async () => again.events.filter((e) => e.event === 'card.filed').length >= 2);
      expect(again.events.filter((e) => e.event === 'card.filed').map((e) => e.data.cardId)).toEqual([b.id, c.id]);
      expect(again.events.some((e) => e.event === 'resync')).toBe(false);
    } finally {
      again.close();
    }
  });

  it('answers 429 with Retry-After past the per-session cap, and refuses a bearer token', async ({ env }) => {
    const ana = await signedIn(env);
    const one = await openStream(ana.cookie);
    const two = await openStream(ana.cookie);
    try {
      expect([one.res.statusCode, two.res.statusCode]).toEqual([200, 200]);
      const three = await env.api().get('/dashboard/api/review/stream').set('Cookie', ana.cookie);
      expect(three.status).toBe(429);
      expect(three.headers['retry-after']).toMatch(/^\d+$/);
      expect(three.body).toEqual({ error: 'this session already has 2 live streams open; close one (another tab) and try again' });
      // Another session of the same person has its own places.
      const again = await signedIn(env, { accountId: ana.accountId });
      const theirs = await openStream(again.cookie);
      expect(theirs.res.statusCode).toBe(200);
      theirs.close();
    } finally {
      one.close();
      two.close();
    }
    // A closed stream frees its place (as soon as the server sees the socket close).
    await waitFor(
      async () => {
        const s = await openStream(ana.cookie);
        s.close();
        return s.res.statusCode === 200;
      },
      'the closed streams to free their places',
      10_000,
    );
    const bearer = await env.api().get('/dashboard/api/review/stream').set('Cookie', ana.cookie).set(auth('x'));
    expect(bearer.status).toBe(401);
  });

  it('ends the stream when the session is signed out', async ({ env }) => {
    const ana = await signedIn(env);
    const stream = await openStream(ana.cookie);
    await until(async () => stream.events.find((e) => e.event === 'ready'));
    expect((await ana.request('delete', '/dashboard/api/session')).status).toBe(204);
    const ended = await until(async () => stream.events.find((e) => e.event === 'end'));
    expect(ended.data).toEqual({ reason: 'session' });
    await until(async () => stream.res.complete);
  });
});
