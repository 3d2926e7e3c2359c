import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../helpers/processes.js';
import { localTransport } from '../../src/mail/local.transport.js';
import { smtpTransport } from '../../src/mail/smtp.transport.js';
import { NotSent } from '../../src/mail/mail.types.js';
import { fencesRepository } from '../../src/shipping/fence.repository.js';
import { sweepSends } from '../../src/shipping/reconcile.service.js';
import { startPools, type Pools } from '../../workers/main.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';
import { startHttpProvider } from '../helpers/smtp-http-provider.js';
import { closedPort } from '../helpers/smtp-server.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { cardRow, rows, sendOfCard } from '../helpers/rows.js';

const msg = { from: 'Agent <agent@example.test>', to: 'jane@acme.test', subject: 'Hello', text: 'Body' };

describe('local development transport', () => {
  it('keeps each message as a readable .eml file and never writes a key twice', async () => {
    const dir = `/tmp/gas-local-mail-${process.pid}-${Date.now()}`;
    const t = localTransport(dir);
    expect(await t.lookup('mail-k1')).toEqual({ state: 'not_found' });
    await Promise.all(Array.from({ length: 10 }, () => t.send(msg, 'mail-k1')));
    const files = await readdir(dir);
    expect(files).toEqual(['mail-k1.eml']);
    expect(await t.lookup('mail-k1')).toMatchObject({ state: 'sent' });
    const { readFile } = await import('node:fs/promises');
    const raw = await readFile(`${dir}/mail-k1.eml`, 'utf8');
    expect(raw).toContain('Subject: Hello');
    expect(raw).toContain('Message-ID: <mail-k1@localhost>');
  });
});

describe('SMTP transport', () => {
  it('says NotSent (not answer lost) when the server cannot be reached', async () => {
    const t = smtpTransport({
      host: '127.0.0.1',
      port: await closedPort(),
      secure: false,
      auth: null,
      connectTimeoutMs: 1000,
      sendTimeoutMs: 2000,
    });
    await expect(t.send(msg, 'mail-k2')).rejects.toBeInstanceOf(NotSent);
    expect(await t.lookup('mail-k2')).toEqual({ state: 'unknown' });
  });
});

describe('POST /review/{id}/send when the SMTP server is down', () => {
  let env: TestEnv;
  beforeAll(async () => {
    env = await setupTestEnv({
      env: {
        MAIL_TRANSPORT: 'smtp',
        SMTP_PORT: String(await closedPort()),
        MAIL_RETRY_AFTER_SECONDS: '11',
        MAIL_CONNECT_TIMEOUT_MS: '1000',
      },
    });
  });
  afterAll(() => env.close());

  it('answers 503 unavailable with Retry-After and leaves the card pending with nothing fenced', async () => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(503);
    expect(res.body).toEqual({ error: 'unavailable', message: expect.any(String) });
    expect(res.headers['retry-after']).toBe('11');
    expect(res.headers['cache-control']).toBe('no-store');
    const item = (await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item;
    expect(item).toMatchObject({ status: 'pending', actions: ['send', 'request_changes', 'snooze', 'dismiss'] });
    const fences = await rows(env, 'shipments', { card_id: card.id });
    expect(fences.map((f: { status: string }) => f.status)).toEqual(['not_sent']);
  });
});

describe('HTTP mail API transport', () => {
  let env: TestEnv;
  let pools: Pools;
  let provider: Awaited<ReturnType<typeof startHttpProvider>>;
  beforeAll(async () => {
    provider = await startHttpProvider();
    env = await setupTestEnv({
      env: {
        MAIL_TRANSPORT: 'http',
        MAIL_API_URL: provider.url,
        MAIL_SEND_TIMEOUT_MS: '2000',
        MAIL_RECONCILE_DELAY_MS: '100',
        MAIL_RECONCILE_WINDOW_MS: '5000',
      },
    });
    pools = await startPools(env.deps, ['shipments']);
  });
  afterAll(async () => {
    await pools.close();
    await env.close();
    await provider.close();
  });

  it('sends with an Idempotency-Key and answers 200 with the provider id', async () => {
    provider.state.mode = 'accept';
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    const m = provider.messages.find((x) => x.key === `mail-${res.body.sendId}`);
    expect(m?.id).toBe(res.body.providerId);
  });

  it('settles a lost answer by lookup: 503 delivery_pending, then the card is sent without a second copy', async () => {
    provider.state.mode = 'drop-after';
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('delivery_pending');
    provider.state.mode = 'accept';
    await until(async () => (await cardRow(env, card.id))?.status === 'sent');
    const retry = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(retry.status).toBe(409);
    const fence = await sendOfCard(env, card.id);
    expect(provider.messages.filter((m) => m.key === fence.idempotency_key)).toHaveLength(1);
  });

  it('settles a send whose sender crashed between fence and answer, through the mail sweep', async () => {
    provider.state.mode = 'accept';
    const { accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', { status: 'sending' });
    const long = Date.now() - 60_000;
    const fence = await fencesRepository(env.deps.db).insert(
      {
        id: 'send_crashed1',
        accountId,
        cardId: card.id,
        idempotencyKey: 'mail-send_crashed1',
        to: 'jane@acme.test',
        subject: 'crashed',
        body: 'b',
        decidedBy: 'person',
      },
      long,
    );
    expect(fence.status).toBe('sending');
    expect(await sweepSends(env.deps)).toBe(1);
    await until(async () => (await cardRow(env, card.id))?.status === 'sent');
    expect(provider.messages.filter((m) => m.key === 'mail-send_crashed1')).toHaveLength(1);
    expect(await sweepSends(env.deps)).toBe(0);
  });

  it('resends under the same key when the provider never got the message', async () => {
    provider.state.mode = 'drop-before';
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('delivery_pending');
    provider.state.mode = 'accept';
    await until(async () => (await cardRow(env, card.id))?.status === 'sent');
    const fence = await sendOfCard(env, card.id);
    expect(fence.status).toBe('sent');
    expect(provider.messages.filter((m) => m.key === fence.idempotency_key)).toHaveLength(1);
  });
});
