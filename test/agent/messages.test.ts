import { describe, expect } from 'vitest';
import { GetMessageResponse, PostMessageResponse, StatusResponse, ThreadResponse } from '../../api/routes/agent.schemas.js';
import { agentOptions, it } from '../helpers/fixture.js';
import { pollUntil } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { turnRow, rows } from '../helpers/rows.js';

it.override('options', agentOptions());

describe('POST /agent/messages', () => {
  it('answers 200 with a terminal message and filled replies when waitSeconds is given', async ({ agent: env }) => {
    const { token } = await env.tenant();
    const res = await env.send(token, { text: 'hello there', waitSeconds: 10 });
    expect(res.status).toBe(200);
    const body = PostMessageResponse.parse(res.body);
    expect(body.deduplicated).toBe(false);
    expect(body.message?.status).toBe('replied');
    expect(body.message?.text).toBe('hello there');
    expect(body.message?.replies.length).toBeGreaterThan(0);
    expect(body.message?.interrupted).toBe(false);
  });

  it('answers 202 with requestId and deduplicated false without waitSeconds, and the turn then replies', async ({ agent: env }) => {
    const { token } = await env.tenant();
    const res = await env.send(token, { text: 'hi' });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ requestId: expect.any(String), deduplicated: false });
    const m = await env.until(token, res.body.requestId, (m) => m.status === 'replied');
    expect(m.replies[0]?.text).toContain('hi');
  });

  it('refuses bad text: missing, empty or over 8,000 bytes is 400; over 4,000 characters is 409', async ({ agent: env }) => {
    const { token } = await env.tenant();
    expect((await env.send(token, {})).body).toEqual({ error: 'text is required' });
    expect((await env.send(token, { text: '' })).status).toBe(400);
    expect((await env.send(token, { text: '   ' })).status).toBe(400);
    expect((await env.send(token, { text: 42 })).body).toEqual({ error: 'text must be a string' });
    const bytes = await env.send(token, { text: 'é'.repeat(4_001) });
    expect(bytes.status).toBe(400);
    expect(bytes.body.error).toMatch(/8,000/);
    const chars = await env.send(token, { text: 'a'.repeat(4_001) });
    expect(chars.status).toBe(409);
    expect(chars.body).toEqual({ error: 'rejected', message: 'text must be at most 4,000 characters' });
    expect((await env.send(token, { text: 'a'.repeat(4_000) })).status).toBe(202);
    // 4,000 characters of 2-byte text is 8,000 bytes: allowed.
    expect((await env.send(token, { text: 'é'.repeat(4_000) })).status).toBe(202);
  });

  it('refuses bad flags with 400: waitSeconds outside 0–120, non-boolean interrupt/queue, queue with interrupt', async ({ agent: env }) => {
    const { token } = await env.tenant();
    for (const waitSeconds of [-1, 121, 1.5, '5']) {
      expect((await env.send(token, { text: 'x', waitSeconds })).body).toEqual({ error: 'waitSeconds must be an integer from 0 to 120' });
    }
    expect((await env.send(token, { text: 'x', interrupt: 'no' })).body).toEqual({ error: 'interrupt must be true or false' });
    expect((await env.send(token, { text: 'x', queue: 1 })).body).toEqual({ error: 'queue must be true or false' });
    expect((await env.send(token, { text: 'x', queue: true, interrupt: true })).body).toEqual({
      error: 'queue cannot be combined with interrupt',
    });
    expect((await env.send(token, { text: 'x', queue: true, interrupt: false })).status).toBe(400);
  });

  it('checks clientRequestId: non-string 400, disallowed character 409', async ({ agent: env }) => {
    const { token } = await env.tenant();
    expect((await env.send(token, { text: 'x', clientRequestId: 7 })).body).toEqual({ error: 'clientRequestId must be a string' });
    const bad = await env.send(token, { text: 'x', clientRequestId: 'has space' });
    expect(bad.status).toBe(409);
    expect(bad.body.error).toBe('rejected');
    expect((await env.send(token, { text: 'x', clientRequestId: 'a'.repeat(129) })).status).toBe(400);
    expect((await env.send(token, { text: 'x', clientRequestId: 'Az09_.:-'.padEnd(128, 'z') })).status).toBe(202);
  });

  it('deduplicates 20 concurrent identical POSTs into one message', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const results = await Promise.all(Array.from({ length: 20 }, () => env.send(token, { text: 'same', clientRequestId: 'req-1' })));
    const ids = new Set(results.map((r) => r.body.requestId));
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.body.deduplicated === false)).toHaveLength(1);
    const found = await rows(env, 'agent_turns', { account_id: accountId });
    expect(found).toHaveLength(1);
  });

  it('returns the original requestId on retry (even after it finished), and refuses the same id with a different text', async ({
    agent: env,
  }) => {
    const { token } = await env.tenant();
    const first = await env.send(token, { text: 'original', clientRequestId: 'abc', waitSeconds: 10 });
    expect(first.status).toBe(200);
    const again = await env.send(token, { text: 'original', clientRequestId: 'abc' });
    expect(again.body).toEqual({ requestId: first.body.requestId, deduplicated: true });
    const waited = await env.send(token, { text: 'original', clientRequestId: 'abc', waitSeconds: 5 });
    expect(waited.status).toBe(200);
    expect(waited.body.message.status).toBe('replied');
    const other = await env.send(token, { text: 'different', clientRequestId: 'abc' });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('rejected');
    expect(other.body.message).toMatch(/different text/);
    expect(other.body.requestId).toBeUndefined();
  });

  it('needs the agent:message scope', async ({ agent: env }) => {
    const { token } = await env.tenant(['results:read']);
    const res = await env.send(token, { text: 'x' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'agent:message' });
  });
});

describe('GET /agent/messages/{requestId}', () => {
  it('holds the latest five bubbles, oldest first', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const res = await env.send(token, { text: 'hi', waitSeconds: 10 });
    const id = res.body.requestId as string;
    const base = Date.now();
    await env.deps
      .db('agent_replies')
      .insert(Array.from({ length: 6 }, (_, i) => ({ turn_id: id, account_id: accountId, text: `extra ${i}`, at: base + i })));
    const got = await env.api().get(`/api/v1/agent/messages/${id}`).set(auth(token));
    const { message } = GetMessageResponse.parse(got.body);
    expect(message.replies.map((r) => r.text)).toEqual(['extra 1', 'extra 2', 'extra 3', 'extra 4', 'extra 5']);
  });

  it("answers 404 for unknown ids, another account's message and another token's message", async ({ agent: env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const sent = await env.send(a.token, { text: 'mine' });
    const get = (token: string, id: string) => env.api().get(`/api/v1/agent/messages/${id}`).set(auth(token));
    expect((await get(a.token, 'req_nope')).status).toBe(404);
    expect((await get(b.token, sent.body.requestId)).body).toEqual({ error: 'not found' });
    const { mintToken } = await import('../../src/tokens/tokens.service.js');
    const colleague = await mintToken(env.deps.db, env.config.tokenPrefix, {
      accountId: a.accountId,
      label: 'colleague',
      scopes: ['agent:message'],
    });
    expect((await get(colleague.token, sent.body.requestId)).status).toBe(404);
    const { startTurn } = await import('../helpers/agent.js');
    const dashboard = await startTurn(env.deps, {
      accountId: a.accountId,
      kind: 'message',
      origin: 'dashboard',
      text: 'from the dashboard',
    });
    expect((await get(a.token, dashboard.turn.id)).status).toBe(404);
    const thread = await env.api().get('/api/v1/agent/thread').set(auth(a.token));
    expect(thread.body.items.map((i: { requestId: string }) => i.requestId)).not.toContain(dashboard.turn.id);
  });
});

describe('GET /agent/thread', () => {
  it("lists this token's thread only, newest first, with limit 1–100 (default 50)", async ({ agent: env }) => {
    const a = await env.tenant();
    await env.send(a.token, { text: 'first', waitSeconds: 10 });
    await env.send(a.token, { text: 'second', waitSeconds: 10 });
    const other = await env.tenant();
    await env.send(other.token, { text: 'not yours', waitSeconds: 10 });
    const res = await env.api().get('/api/v1/agent/thread').set(auth(a.token));
    const { items } = ThreadResponse.parse(res.body);
    const users = items.filter((i) => i.role === 'user').map((i) => i.text);
    expect(users).toEqual(['second', 'first']);
    expect(items[0]?.role).toBe('agent');
    expect(items.every((i, n) => n === 0 || items[n - 1]!.at >= i.at)).toBe(true);
    const one = await env.api().get('/api/v1/agent/thread?limit=1').set(auth(a.token));
    expect(one.body.items).toHaveLength(1);
    for (const limit of ['0', '101', 'x']) {
      const bad = await env.api().get(`/api/v1/agent/thread?limit=${limit}`).set(auth(a.token));
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: 'limit must be an integer from 1 to 100' });
    }
  });
});

describe('GET /agent/status', () => {
  it('reports dead between turns, with activity timestamps and no wakes', async ({ agent: env }) => {
    const { token } = await env.tenant();
    const fresh = StatusResponse.parse((await env.api().get('/api/v1/agent/status').set(auth(token))).body);
    expect(fresh.status).toMatchObject({ sandbox: 'dead', running: false, pendingWakes: 0, nextWakeAt: null, lastTurnAt: null });
    await env.send(token, { text: 'hi', waitSeconds: 10 });
    const after = StatusResponse.parse((await env.api().get('/api/v1/agent/status').set(auth(token))).body);
    expect(after.status.sandbox).toBe('dead');
    expect(after.status.running).toBe(false);
    expect(after.status.lastTurnAt).toEqual(expect.any(Number));
    expect(after.status.lastActivityAt).toBeGreaterThanOrEqual(after.status.lastTurnAt ?? 0);
  });

  it('counts scheduled wakes in pendingWakes and nextWakeAt; a wake enters through the same entry point and runs when due', async ({
    agent: env,
  }) => {
    const { token, accountId } = await env.tenant();
    const { startTurn } = await import('../helpers/agent.js');
    const later = Date.now() + 3_600_000;
    await startTurn(env.deps, { accountId, kind: 'wake', origin: 'schedule', notBefore: later });
    const soon = await startTurn(env.deps, { accountId, kind: 'wake', origin: 'schedule', notBefore: Date.now() + 300 });
    const res = await env.api().get('/api/v1/agent/status').set(auth(token));
    expect(res.body.status).toMatchObject({ pendingWakes: 2, nextWakeAt: soon.turn.notBefore });
    await pollUntil(
      () => turnRow(env, soon.turn.id),
      (t) => t.status === 'replied',
      'the due wake to run',
    );
    const after = await env.api().get('/api/v1/agent/status').set(auth(token));
    expect(after.body.status).toMatchObject({ pendingWakes: 1, nextWakeAt: later });
  });

  it('needs results:read', async ({ agent: env }) => {
    const { token } = await env.tenant(['agent:message']);
    expect((await env.api().get('/api/v1/agent/status').set(auth(token))).body).toEqual({
      error: 'forbidden',
      requiredScope: 'results:read',
    });
  });
});
