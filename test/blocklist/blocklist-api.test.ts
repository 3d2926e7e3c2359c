import { describe, expect } from 'vitest';
import { BlocklistAddResponse, BlocklistPage } from '../../api/routes/blocklist.schemas.js';
import { addToBlocklist, isBlocked, refuseIfBlocked } from '../../src/blocklist/blocklist.service.js';
import { recordOptOut } from '../../src/blocklist/opt-out.js';
import { envFor, adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { run, TSX } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { countRows, rows } from '../helpers/rows.js';

async function add(env: TestEnv, token: string, entries: unknown[]) {
  return env.api().post('/api/v1/blocklist').set(auth(token)).send({ entries });
}

const admin = (env: TestEnv, argv: string[]) => adminCall(env, argv);

describe('POST /blocklist', () => {
  it('adds 500 entries, then counts all 500 as existing when the same list is sent again', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const list = Array.from({ length: 500 }, (_, i) => (i % 2 ? `person${i}@corp${i}.com` : `domain${i}.io`));
    const first = await add(env, token, list);
    expect(first.status).toBe(200);
    expect(BlocklistAddResponse.parse(first.body)).toEqual({ added: 500, existing: 0, invalid: [] });
    const again = await add(
      env,
      token,
      list.map((v) => v.toUpperCase()),
    );
    expect(again.body).toEqual({ added: 0, existing: 500, invalid: [] });
    expect(await countRows(env, 'blocklist_entries', { account_id: accountId })).toBe(500);
  });

  it('adds each value once when the same list is sent twice at the same moment', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const list = Array.from({ length: 300 }, (_, i) => `race${i}.com`);
    const [a, b] = await Promise.all([add(env, token, list), add(env, token, list)]);
    expect(a.body.added + b.body.added).toBe(300);
    expect(a.body.existing + b.body.existing).toBe(300);
    expect(await countRows(env, 'blocklist_entries', { account_id: accountId })).toBe(300);
  });

  it('answers 400 naming entries when a call carries 501', async ({ env }) => {
    const { token } = await env.tenant();
    const res = await add(
      env,
      token,
      Array.from({ length: 501 }, (_, i) => `d${i}.com`),
    );
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'entries must have at most 500 items' });
  });

  it('folds spellings of one value together and lists unreadable strings in invalid', async ({ env }) => {
    const { token } = await env.tenant();
    const res = await add(env, token, [
      'Acme.com.',
      'www.acme.com',
      'mailto:Jane@Acme.com',
      { value: 'jane@acme.com', reason: 'asked' },
      'nope',
      'nope',
      'https://linkedin.com/in/Jane/',
    ]);
    expect(res.body).toEqual({ added: 3, existing: 2, invalid: ['nope'] });
    const list = BlocklistPage.parse((await env.api().get('/api/v1/blocklist').set(auth(token))).body);
    expect(list.entries.map((e) => [e.kind, e.value, e.source]).sort()).toEqual([
      ['domain', 'acme.com', 'api'],
      ['email', 'jane@acme.com', 'api'],
      ['network', 'https://www.linkedin.com/in/jane', 'api'],
    ]);
    expect(list.entries.every((e) => e.addedBy === 'test')).toBe(true);
  });

  it('keeps the reason given with an entry', async ({ env }) => {
    const { token } = await env.tenant();
    await add(env, token, [{ value: 'rival.com', reason: 'competitor' }]);
    const { entries } = BlocklistPage.parse((await env.api().get('/api/v1/blocklist').set(auth(token))).body);
    expect(entries[0]).toMatchObject({ value: 'rival.com', reason: 'competitor', kind: 'domain' });
  });

  it('answers 400 for a body without entries, an empty list, an unknown field or a non-string entry', async ({ env }) => {
    const { token } = await env.tenant();
    const cases: Array<[unknown, string]> = [
      [{}, 'entries is required'],
      [{ entries: [] }, 'entries must have at least 1 item'],
      [{ entries: ['a.com'], source: 'agent' }, 'body has unknown field source'],
      [{ entries: 'a.com' }, 'entries must be an array'],
    ];
    for (const [body, error] of cases) {
      const res = await env
        .api()
        .post('/api/v1/blocklist')
        .set(auth(token))
        .send(body as object);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error });
    }
    const entryCases: Array<[unknown, string]> = [
      [42, 'entries.1 must be a string or an object { value, reason? }'],
      [{ value: 'a.com', source: 'agent' }, 'entries.1 has unknown field source'],
      [{ reason: 'no value' }, 'entries.1 must be a string or an object { value, reason? }'],
      ['x'.repeat(2_049), 'entries.1 must be at most 2048 characters'],
      [{ value: 'a.com', reason: 'r'.repeat(501) }, 'entries.1.reason must be at most 500 characters'],
    ];
    for (const [entry, error] of entryCases) {
      const bad = await env
        .api()
        .post('/api/v1/blocklist')
        .set(auth(token))
        .send({ entries: ['ok.com', entry] });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error });
    }
  });

  it('answers 403 with requiredScope leads:write for a read-only token', async ({ env }) => {
    const { token } = await env.tenant(['leads:read']);
    const res = await add(env, token, ['a.com']);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'leads:write' });
  });

  it('records the add in the audit log against the token label', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    await add(env, token, ['audited.com']);
    const audited = await rows(env, 'audit_log', { account_id: accountId, route: '/api/v1/blocklist' });
    expect(audited).toHaveLength(1);
    expect(audited[0]).toMatchObject({ token_label: 'test', method: 'POST', status: 200 });
  });
});

describe('GET /blocklist', () => {
  it('pages newest first with a cursor until nextCursor is null, and never shows another account', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const other = await env.tenant();
    await addToBlocklist(env.deps.db, other.accountId, ['other.com'], 'customer', null);
    for (let i = 0; i < 7; i++) await addToBlocklist(env.deps.db, accountId, [`n${i}.com`], 'customer', 'Dana');
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await env
        .api()
        .get('/api/v1/blocklist')
        .query({ limit: 3, ...(cursor ? { cursor } : {}) })
        .set(auth(token));
      expect(res.status).toBe(200);
      const page = BlocklistPage.parse(res.body);
      seen.push(...page.entries.map((e) => e.value));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['n6.com', 'n5.com', 'n4.com', 'n3.com', 'n2.com', 'n1.com', 'n0.com']);
  });

  it('answers 400 for limit outside 1 to 200, and for a tampered or foreign cursor', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    for (const limit of ['0', '201', 'x']) {
      const res = await env.api().get('/api/v1/blocklist').query({ limit }).set(auth(token));
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'limit must be an integer from 1 to 200' });
    }
    await addToBlocklist(env.deps.db, accountId, ['a.com', 'b.com'], 'customer', null);
    const { nextCursor } = BlocklistPage.parse((await env.api().get('/api/v1/blocklist').query({ limit: 1 }).set(auth(token))).body);
    expect(nextCursor).toBeTruthy();
    const other = await env.tenant();
    const foreign = await env.api().get('/api/v1/blocklist').query({ cursor: nextCursor }).set(auth(other.token));
    expect(foreign.status).toBe(400);
    expect(foreign.body).toEqual({ error: 'cursor is not valid' });
    const tampered = `${nextCursor!.slice(0, 5)}${nextCursor![5] === 'A' ? 'B' : 'A'}${nextCursor!.slice(6)}`;
    const res = await env.api().get('/api/v1/blocklist').query({ cursor: tampered }).set(auth(token));
    expect(res.body).toEqual({ error: 'cursor is not valid' });
  });

  it('answers 403 with requiredScope leads:read without the scope', async ({ env }) => {
    const { token } = await env.tenant(['results:read']);
    const res = await env.api().get('/api/v1/blocklist').set(auth(token));
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'leads:read' });
  });
});

describe('isBlocked', () => {
  it('blocks an email when the email, its domain or a parent domain is listed, in any spelling', async ({ env }) => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    await addToBlocklist(db, accountId, ['acme.com', 'solo@other.io', 'https://www.linkedin.com/in/jane'], 'customer', null);
    expect(await isBlocked(db, accountId, 'anyone@acme.com')).toBe(true);
    expect(await isBlocked(db, accountId, 'Anyone@Mail.ACME.com')).toBe(true);
    expect(await isBlocked(db, accountId, 'sales.acme.com')).toBe(true);
    expect(await isBlocked(db, accountId, 'mailto:SOLO@other.io')).toBe(true);
    expect(await isBlocked(db, accountId, 'someone@other.io')).toBe(false);
    expect(await isBlocked(db, accountId, 'linkedin.com/in/Jane/')).toBe(true);
    expect(await isBlocked(db, accountId, 'acme.co')).toBe(false);
    const stranger = await env.tenant();
    expect(await isBlocked(db, stranger.accountId, 'anyone@acme.com')).toBe(false);
  });

  it('refuses contact with a blocked address as a 409 rejected with a message', async ({ env }) => {
    const { accountId } = await env.tenant();
    await addToBlocklist(env.deps.db, accountId, ['acme.com'], 'customer', null);
    await expect(refuseIfBlocked(env.deps.db, accountId, 'jane@acme.com')).rejects.toMatchObject({
      status: 409,
      error: 'rejected',
      message: 'jane@acme.com is on the block list; nothing was sent',
    });
    await expect(refuseIfBlocked(env.deps.db, accountId, 'jane@other.com')).resolves.toBeUndefined();
  });
});

describe('admin blocklist remove', () => {
  it('refuses to remove an opt-out with the spec string, and removes any other entry', async ({ env }) => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    await addToBlocklist(db, accountId, ['gone@acme.com'], 'opt_out_reply', null);
    await addToBlocklist(db, accountId, ['keep.com'], 'customer', 'Dana');
    expect(await admin(env, ['blocklist', 'remove', '--account', accountId, '--value', 'Gone@Acme.com'])).toEqual({
      error: 'this address unsubscribed and cannot be unblocked',
    });
    expect(await isBlocked(db, accountId, 'gone@acme.com')).toBe(true);
    const removed = await admin(env, ['blocklist', 'remove', '--account', accountId, '--value', 'KEEP.com.']);
    expect(removed.out).toMatchObject({ ok: true, removed: { value: 'keep.com', source: 'customer' } });
    expect(await isBlocked(db, accountId, 'x@keep.com')).toBe(false);
    expect(await admin(env, ['blocklist', 'remove', '--account', accountId, '--value', 'keep.com'])).toEqual({ error: 'not found' });
  });

  it('keeps an entry that later opted out unremovable', async ({ env }) => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    await addToBlocklist(db, accountId, ['late@acme.com'], 'customer', null);
    expect(await addToBlocklist(db, accountId, ['late@acme.com'], 'opt_out_reply', null)).toEqual({ added: 0, existing: 1, invalid: [] });
    expect(await admin(env, ['blocklist', 'remove', '--account', accountId, '--value', 'late@acme.com'])).toEqual({
      error: 'this address unsubscribed and cannot be unblocked',
    });
  });
});

describe('recordOptOut', () => {
  it('lists the address as an opt-out and counts one email opt-out, however often it is reported', async ({ env }) => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    await addToBlocklist(db, accountId, ['bye@acme.com'], 'customer', 'Dana');
    for (let i = 0; i < 2; i++)
      expect(await recordOptOut(db, accountId, { address: 'Bye@Acme.com', at: Date.now() - 1000, refId: 'msg-1' })).toEqual({
        listed: true,
      });
    const listed = await rows(env, 'blocklist_entries', { account_id: accountId });
    expect(listed.map((r) => [r.value, r.source])).toEqual([['bye@acme.com', 'opt_out_reply']]);
    const events = await rows(env, 'channel_events', { account_id: accountId, channel: 'email', type: 'opt_out' });
    expect(events).toHaveLength(1);
  });
});

describe('admin CLI process', () => {
  it('prints the spec error on stderr and exits 1 when asked to unblock an opt-out', async ({ env }) => {
    const { accountId } = await env.tenant();
    await addToBlocklist(env.deps.db, accountId, ['gone@cli.com'], 'opt_out_reply', null);
    const res = await run(
      TSX,
      ['bin/admin.ts', 'blocklist', 'remove', '--account', accountId, '--value', 'gone@cli.com'],
      envFor(env.config),
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(JSON.parse(res.stderr.trim())).toEqual({ error: 'this address unsubscribed and cannot be unblocked' });
  });
});
