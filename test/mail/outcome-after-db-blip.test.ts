import { EventEmitter } from 'node:events';
import request from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { createLogger } from '../../src/logger.js';
import { RECORD_TRIES } from '../../src/shipping/record-outcome.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { tcpProxy } from '../helpers/outages.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { cardRow, rows } from '../helpers/rows.js';

// The SMTP server took the mail (250) and the database connection dropped right
// after; the outcome the process knows must still be recorded, not turned into a "did it go out?" card.
let proxy: Awaited<ReturnType<typeof tcpProxy>>;
let deps: Deps;
const logs = new EventEmitter();
const lines: string[] = [];
/** How many times the service logged that it will try again to record this send's outcome. */
const retries = (sendId: string) => lines.filter((l) => l.includes('not recorded yet') && l.includes(sendId)).length;
it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }));
it.beforeAll(async ({ env, smtp }) => {
  proxy = await tcpProxy(Number(new URL(env.config.databaseUrl).port || 5432));
  const url = new URL(env.config.databaseUrl);
  url.port = String(proxy.port);
  // The service under test reaches Postgres only through the proxy; the test reads through its own pool.
  const config = configWith({
    DATABASE_URL: url.toString(),
    QUEUE_PREFIX: env.config.queuePrefix,
    ...smtpEnv(smtp),
    MAIL_RECONCILE_DELAY_MS: '600000',
  });
  const write = (line: string) => {
    lines.push(line);
    if (line.includes('not recorded yet')) logs.emit('retry');
  };
  deps = createDeps(config, createLogger('warn', { write }));
  await deps.ready();
});
afterAll(async () => {
  await deps.close();
  await proxy.close();
});

/** A draft to `to`, and its send through the service with Postgres cut the moment the SMTP server answers 250. */
async function sendWithBlip(env: TestEnv, smtp: TestSmtp, to: string, restoreWhen: 'first-retry' | 'answered') {
  smtp.mode = { kind: 'accept' };
  const { token, accountId } = await env.tenant();
  const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
    payload: { work: 'email', to, draft: { subject: `subject ${to}`, body: 'Hello' } },
  });
  smtp.events.once('accepted', () => proxy.cut());
  const failedOnce = new Promise<void>((resolve) => logs.once('retry', resolve));
  const answered = request(createApp(deps))
    .post(`/api/v1/review/${card.id}/send`)
    .set(auth(token))
    .send({})
    .then((r) => r);
  // Event-ordered: back once the service has failed to record at least once (or, with no retry, has answered).
  await (restoreWhen === 'first-retry' ? Promise.race([failedOnce, answered]) : answered);
  proxy.restore();
  const res = await answered;
  const fences: { id: string; status: string }[] = await rows(env, 'shipments', { card_id: card.id });
  return { res, accountId, card, fences };
}

describe('a send whose database connection drops right after the SMTP server accepted it', () => {
  it('records the mail as sent once the database is back: 200, fence sent, no "did it go out?" card, one copy', async ({ env, smtp }) => {
    const { res, accountId, card, fences } = await sendWithBlip(env, smtp, 'blip@acme.test', 'first-retry');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ok: true, status: 'sent', to: 'blip@acme.test' });
    expect(fences.map((f) => f.status)).toEqual(['sent']);
    expect(retries(fences[0]!.id)).toBeGreaterThanOrEqual(1);
    expect((await cardRow(env, card.id)).status).toBe('sent');
    // A fence that is `sent` is final: reconciliation never looks at it again, so no question can follow.
    expect(await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_delivery_unknown' })).toEqual([]);
    expect(smtp.received.filter((m) => m.to.includes('blip@acme.test'))).toHaveLength(1);
    expect(await rows(env, 'channel_events', { account_id: accountId, ref_id: res.body.sendId })).toHaveLength(1);
  }, 60_000);

  it(`gives up after ${RECORD_TRIES} tries while the database stays away, and hands the send to reconciliation (503 ` +
    `delivery_pending)`, async ({ env, smtp }) => {
    const { res, card, fences } = await sendWithBlip(env, smtp, 'away@acme.test', 'answered');
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('delivery_pending');
    expect(retries(fences[0]!.id)).toBe(RECORD_TRIES - 1);
    // Never settled blind: the fence waits for reconciliation (the mail sweep picks up a stale `sending`).
    expect(fences.map((f) => f.status)).toEqual(['sending']);
    expect((await cardRow(env, card.id)).status).toBe('sending');
    expect(smtp.received.filter((m) => m.to.includes('away@acme.test'))).toHaveLength(1);
  }, 60_000);
});
