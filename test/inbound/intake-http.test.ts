import { describe, expect } from 'vitest';
import { InboundAccepted } from '../../api/routes/mail-inbound.schemas.js';
import { EMPTY_MESSAGE, NOT_RFC822 } from '../../api/routes/mail-inbound.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { inboundParse } from '../../src/jobs/inbound-mail.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rawMessage } from '../helpers/smtp-client.js';
import { countRows, rows } from '../helpers/rows.js';

// Inbound mail over HTTP and the admin verbs that make and list it.

const LIMIT = 2_048;
it.override('options', { env: { INBOUND_MAX_BYTES: String(LIMIT), BASE_URL: 'https://agent.example.com' } });

async function inboundUrl(env: TestEnv, accountId: string): Promise<{ url: string; path: string; secret: string }> {
  const { out, error } = await adminCall(env, ['mail', 'inbound-url', '--account', accountId]);
  expect(error).toBeUndefined();
  const url = String(out!.url);
  const path = new URL(url).pathname;
  return { url, path, secret: path.split('/').pop()! };
}

const post = (env: TestEnv, path: string, body: Buffer | string, type = 'message/rfc822') =>
  env
    .api()
    .post(path)
    .set('Content-Type', type)
    .send(Buffer.isBuffer(body) ? body : Buffer.from(body));

describe('POST /api/mail/inbound/{secret}', () => {
  it('stores the message whole under the URL account, queues its parse and answers 202 {id, status: received}', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { url, path, secret } = await inboundUrl(env, accountId);
    expect(url).toMatch(/^https:\/\/agent\.example\.com\/api\/mail\/inbound\/inb_[0-9A-Za-z]{40}$/);
    // Only the hash is kept.
    const stored: { secret_hash: string }[] = await rows(env, 'inbound_urls', { account_id: accountId });
    expect(stored).toHaveLength(1);
    expect(stored[0]!.secret_hash).not.toContain(secret);
    const raw = rawMessage({ body: 'Bare\nLF and CRLF\r\nmixed, kept as sent' });
    const res = await post(env, path, raw);
    expect(res.status).toBe(202);
    const body = InboundAccepted.parse(res.body);
    expect(body.status).toBe('received');
    const row = await inboundRepository(env.deps.db).withRaw(body.id);
    expect(row).toMatchObject({ accountId, via: 'http', status: 'received', mailFrom: null, rcptTo: [] });
    expect(row!.raw.equals(raw)).toBe(true);
    const job = await pendingJob(env.deps.queues.get('inbound-mail')!, inboundParse.key({ id: body.id }));
    expect(job?.data).toEqual({ id: body.id });
  });

  it('answers 404 to an unknown, garbled or replaced secret, and stores nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    const first = await inboundUrl(env, accountId);
    const second = await inboundUrl(env, accountId);
    expect(second.secret).not.toBe(first.secret);
    const before = await countRows(env, 'inbound_messages');
    for (const path of [
      first.path,
      '/api/mail/inbound/inb_0000000000000000000000000000000000000000',
      '/api/mail/inbound/nonsense',
      `/api/mail/inbound/${encodeURIComponent("'; drop table accounts; --")}`,
    ]) {
      const res = await post(env, path, rawMessage());
      expect(res.status, path).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
    }
    expect(await countRows(env, 'inbound_messages')).toBe(before);
    expect((await post(env, second.path, rawMessage())).status).toBe(202);
  });

  it('answers 415 to a body that is not message/rfc822, 400 to an empty one, 413 over INBOUND_MAX_BYTES', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { path } = await inboundUrl(env, accountId);
    const json = await post(env, path, '{"raw":"x"}', 'application/json');
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ error: NOT_RFC822 });
    expect(json.headers['cache-control']).toBe('no-store');
    const empty = await post(env, path, '');
    expect(empty.status).toBe(400);
    expect(empty.body).toEqual({ error: EMPTY_MESSAGE });
    const none = await env.api().post(path);
    expect(none.status).toBe(400);
    const big = await post(env, path, Buffer.concat([rawMessage(), Buffer.alloc(LIMIT, 'a')]));
    expect(big.status).toBe(413);
    expect(big.body).toEqual({ error: 'body must be at most 2,048 bytes (INBOUND_MAX_BYTES)' });
    const stored = await rows(env, 'inbound_messages', { account_id: accountId });
    expect(stored).toHaveLength(0);
  });
});

describe('mail inbound-url and mail inbound-list', () => {
  it('prints the URL once per call, refuses an unknown account and a missing flag in one line', async ({ env }) => {
    expect(await adminCall(env, ['mail', 'inbound-url', '--account', 'acct_nope'])).toEqual({ error: 'not found' });
    expect(await adminCall(env, ['mail', 'inbound-url'])).toEqual({ error: '--account is required' });
    const audit: { route: string }[] = await rows(env, 'audit_log', { route: 'mail inbound-url' });
    expect(audit.length).toBeGreaterThan(0);
  });

  it('lists messages newest first with their envelope and outcome, never their bytes; filters by account and status', async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const pa = (await inboundUrl(env, a.accountId)).path;
    const pb = (await inboundUrl(env, b.accountId)).path;
    const first = (await post(env, pa, rawMessage({ body: 'secret words one' }))).body.id as string;
    const second = (await post(env, pa, rawMessage({ body: 'secret words two' }))).body.id as string;
    const other = (await post(env, pb, rawMessage())).body.id as string;
    await inboundRepository(env.deps.db).settle(first, { status: 'unplaced', reason: 'no send matches' }, Date.now());

    const { out } = await adminCall(env, ['mail', 'inbound-list', '--account', a.accountId]);
    const messages = out!.messages as Record<string, unknown>[];
    expect(messages.map((m) => m.id)).toEqual([second, first]);
    expect(Object.keys(messages[0]!).sort()).toEqual(
      [
        'id',
        'accountId',
        'via',
        'mailFrom',
        'rcptTo',
        'size',
        'receivedAt',
        'status',
        'reason',
        'kind',
        'replyKind',
        'sendId',
        'leadId',
      ].sort(),
    );
    expect(messages[1]).toMatchObject({ accountId: a.accountId, via: 'http', status: 'unplaced', reason: 'no send matches' });
    expect(JSON.stringify(out)).not.toContain('secret words');

    const unplaced = await adminCall(env, ['mail', 'inbound-list', '--account', a.accountId, '--status', 'unplaced']);
    expect((unplaced.out!.messages as { id: string }[]).map((m) => m.id)).toEqual([first]);
    const all = await adminCall(env, ['mail', 'inbound-list', '--limit', '1000']);
    expect((all.out!.messages as { id: string }[]).map((m) => m.id)).toEqual(expect.arrayContaining([first, second, other]));
    const one = await adminCall(env, ['mail', 'inbound-list', '--limit', '1']);
    expect(one.out!.messages).toHaveLength(1);
  });

  it('refuses bad flags in one line', async ({ env }) => {
    expect(await adminCall(env, ['mail', 'inbound-list', '--status', 'lost'])).toEqual({
      error: '--status must be one of received, applied, unplaced, malformed, duplicate',
    });
    expect(await adminCall(env, ['mail', 'inbound-list', '--limit', '0'])).toEqual({ error: '--limit must be an integer from 1 to 1000' });
    expect(await adminCall(env, ['mail', 'inbound-list', '--account', 'acct_nope'])).toEqual({ error: 'not found' });
    const unknown = await adminCall(env, ['mail', 'inbound-list', '--bogus', 'x']);
    expect(unknown.error).toMatch(/^Unknown option '--bogus'/);
  });
});
