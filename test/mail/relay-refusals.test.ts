import { describe, expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { cardsRepository, type Card } from '../../src/review/cards/cards.repository.js';
import { createCard } from '../helpers/cards.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { buildCard } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { sentThread } from '../helpers/sent-thread.js';
import { until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { emailResults } from '../helpers/email-results.js';

/**
 * What the outbound relay answers about a recipient, through the real API and the worker pools, against
 * a real SMTP server on loopback that refuses chosen addresses at RCPT or after DATA: a 5xx is a hard
 * bounce (blocked, counted, lead bounced, card settled), a 4xx a soft failure tried again, and
 * MAIL_SOFT_FAILURES_BEFORE_BLOCK of them in a row block the address. A DSN saying `Action: delayed`
 * that comes back to the inbound listener counts as delayed and blocks nothing.
 */
it.override('options', ({ smtp }) => ({
  env: {
    ...smtpEnv(smtp),
    MAIL_RETRY_AFTER_SECONDS: '1',
    MAIL_SOFT_FAILURES_BEFORE_BLOCK: '3',
    TRUST_AUTO_RESOLVE_AFTER: '3',
    TRUST_AUTO_RESOLVE_DELAY_MS: '200',
    CARD_SWEEP_MS: '600000',
  },
  pools: ['card-timers', 'shipments', 'inbound-mail'],
}));

const SCOPES = ['review:read', 'review:write', 'leads:read', 'results:read'] as const;
const USER_UNKNOWN = '5.1.1 Recipient address rejected: User unknown in local recipient table';
const delivered = (smtp: TestSmtp, to: string) => smtp.received.filter((m) => m.to.includes(to)).length;

/** A test's world: the fixture's env and SMTP server, and an account whose lead has the address as contact. */
interface World {
  env: TestEnv;
  smtp: TestSmtp;
  token: string;
  accountId: string;
  leadId: string;
  to: string;
}

/** An account, its lead at the address's domain with the address as contact. */
async function world({ env, smtp }: Pick<World, 'env' | 'smtp'>, to: string): Promise<World> {
  const { token, accountId } = await env.tenant([...SCOPES]);
  const { id: leadId } = await upsertLead(env.deps.db, accountId, { domain: to.split('@')[1]!, contacts: [{ email: to }] });
  return { env, smtp, token, accountId, leadId, to };
}

const mailCard = (w: World, subject: string) =>
  buildCard(w.env.deps.db, w.accountId, 'mail_draft', { payload: { work: 'email', to: w.to, draft: { subject, body: 'Hello there' } } });

/** A trusted mail draft: the trust ladder sends it on its own 200 ms after it appears. */
async function trustedDraft(w: World): Promise<Card> {
  const { env } = w;
  for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, w.accountId, 'email');
  const card = await createCard(env.deps, {
    id: newId('card'),
    accountId: w.accountId,
    kind: 'approval',
    sourceType: 'mail_draft',
    title: `Intro to ${w.to}`,
    payload: { work: 'email', to: w.to, draft: { subject: 'Hello', body: 'A short note.' } },
    actions: [],
    primaryLabel: '',
  });
  expect(card.autoResolveAt).not.toBeNull();
  return card;
}

const send = (w: World, cardId: string) => w.env.api().post(`/api/v1/review/${cardId}/send`).set(auth(w.token)).send({});
const card = async (w: World, id: string) => (await w.env.api().get(`/api/v1/review/${id}`).set(auth(w.token))).body.item;
const lead = async (w: World) => (await w.env.api().get(`/api/v1/leads/${w.leadId}`).set(auth(w.token))).body.lead as { status: string };
const blockEntry = (w: World) => row(w.env, 'blocklist_entries', { account_id: w.accountId, value: w.to });
const fences = async (env: TestEnv, cardId: string) =>
  (await rows(env, 'shipments', { card_id: cardId }).orderBy('created_at')).map((f: { status: string }) => f.status);

const email = (w: World) => emailResults(w.env, w.token);

/** Everything a hard bounce leaves behind, as the API shows it. */
async function expectBounced(w: World, cardId: string, reason: RegExp) {
  const { env, smtp } = w;
  expect(await blockEntry(w)).toMatchObject({ source: 'agent', reason: expect.stringMatching(reason) });
  expect(await email(w)).toMatchObject({ sent: 0, bounces: 1, delayed: 0 });
  expect(await lead(w)).toMatchObject({ status: 'bounced' });
  expect(await card(w, cardId)).toMatchObject({ status: 'resolved', actions: [], resolution: { bounced: true } });
  // The card's own label (GET /review/{id} renders labels from the status alone for now: "Done").
  expect((await cardsRepository(env.deps.db).find(w.accountId, cardId))?.primaryLabel).toBe('Bounced');
  expect(await rows(env, 'mail_soft_failures', { account_id: w.accountId })).toEqual([]);
  expect(delivered(smtp, w.to)).toBe(0);
}

describe('a hard refusal (5xx) from the relay is a hard bounce', () => {
  it('550 at RCPT: 409 rejected, the address blocked with the SMTP text, counted, the lead bounced, the card settled', async ({
    env,
    smtp,
  }) => {
    const w = await world({ env, smtp }, 'ghost@rcpt-hard.test');
    smtp.refusals.set(w.to, { at: 'rcpt', code: 550, text: USER_UNKNOWN });
    const c = await mailCard(w, 'subject-rcpt-550');
    const res = await send(w, c.id);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: 'rejected', message: expect.stringContaining(`550 ${USER_UNKNOWN}`) });
    await expectBounced(w, c.id, /^550 5\.1\.1 Recipient address rejected/);
    expect((await card(w, c.id)).resolution).toMatchObject({ action: 'send', by: 'person', bounced: true });
    // Settled for good: a second send is refused and reaches nobody, even once the relay would take it.
    smtp.refusals.delete(w.to);
    const again = await send(w, c.id);
    expect(again.status).toBe(409);
    expect(await fences(env, c.id)).toEqual(['not_sent']);
    // A new card to the address is refused before anything is fenced (the block list).
    const next = await mailCard(w, 'subject-rcpt-550-again');
    expect((await send(w, next.id)).body).toEqual({ error: 'rejected', message: expect.stringContaining('block list') });
    expect(delivered(smtp, w.to)).toBe(0);
  });

  it('550 after DATA: the same', async ({ env, smtp }) => {
    const w = await world({ env, smtp }, 'full@data-hard.test');
    smtp.refusals.set(w.to, { at: 'data', code: 550, text: '5.2.2 mailbox full' });
    const c = await mailCard(w, 'subject-data-550');
    const res = await send(w, c.id);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('rejected');
    await expectBounced(w, c.id, /^550 5\.2\.2 mailbox full$/);
  });

  it('550 at RCPT to a card the trust ladder sends: the same, decided by the ladder', async ({ env, smtp }) => {
    const w = await world({ env, smtp }, 'ghost@ladder-hard.test');
    smtp.refusals.set(w.to, { at: 'rcpt', code: 550, text: USER_UNKNOWN });
    const c = await trustedDraft(w);
    await until(async () => (await cardsRepository(env.deps.db).find(w.accountId, c.id))?.status === 'resolved', 15_000);
    await expectBounced(w, c.id, /^550 5\.1\.1/);
    expect((await card(w, c.id)).resolution).toMatchObject({ by: 'trust_ladder', bounced: true });
  });
});

describe('a soft refusal (4xx) is tried again', () => {
  it('451 at RCPT to a person: 503 unavailable with Retry-After, nothing blocked; the same send later goes out once', async ({
    env,
    smtp,
  }) => {
    const w = await world({ env, smtp }, 'busy@rcpt-soft.test');
    smtp.refusals.set(w.to, { at: 'rcpt', code: 451, text: '4.3.0 try again later', times: 1 });
    const c = await mailCard(w, 'subject-rcpt-451');
    const first = await send(w, c.id);
    expect(first.status).toBe(503);
    expect(first.body).toEqual({ error: 'unavailable', message: expect.stringContaining('451 4.3.0 try again later') });
    expect(first.headers['retry-after']).toBe('1');
    expect(await card(w, c.id)).toMatchObject({ status: 'pending', actions: ['send', 'request_changes', 'snooze', 'dismiss'] });
    expect(await rows(env, 'mail_soft_failures', { account_id: w.accountId })).toMatchObject([{ address: w.to, failures: 1 }]);
    const second = await send(w, c.id);
    expect(second.status).toBe(200);
    expect(delivered(smtp, w.to)).toBe(1);
    expect(await fences(env, c.id)).toEqual(['not_sent', 'sent']);
    expect(await blockEntry(w)).toBeUndefined();
    // Taken: the failures in a row start again.
    expect(await rows(env, 'mail_soft_failures', { account_id: w.accountId })).toEqual([]);
    expect(await email(w)).toMatchObject({ sent: 1, bounces: 0 });
  });

  it('451 twice to a card the trust ladder sends: tried again with a growing delay, then sent once', async ({ env, smtp }) => {
    const w = await world({ env, smtp }, 'later@ladder-soft.test');
    smtp.refusals.set(w.to, { at: 'data', code: 451, text: '4.7.1 greylisted', times: 2 });
    const c = await trustedDraft(w);
    const sent = await until(async () => {
      const now = await cardsRepository(env.deps.db).find(w.accountId, c.id);
      return now?.status === 'sent' && now;
    }, 30_000);
    expect(sent.resolution).toMatchObject({ action: 'send', by: 'trust_ladder' });
    expect(await fences(env, c.id)).toEqual(['not_sent', 'not_sent', 'sent']);
    // Each try waited longer than the one before (MAIL_RETRY_AFTER_SECONDS, doubling).
    const at = (await rows(env, 'shipments', { card_id: c.id }).orderBy('created_at')).map((f: { created_at: string }) =>
      Number(f.created_at),
    );
    // Lower bounds only, with slack for the timers' own granularity: load only makes the gaps longer.
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(750);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(1_500);
    expect(delivered(smtp, w.to)).toBe(1);
    expect(await blockEntry(w)).toBeUndefined();
    expect(await lead(w)).toMatchObject({ status: 'contacted' });
  });

  it('451 every time: the third in a row (MAIL_SOFT_FAILURES_BEFORE_BLOCK=3) blocks the address and settles the card', async ({
    env,
    smtp,
  }) => {
    const w = await world({ env, smtp }, 'never@ladder-soft.test');
    smtp.refusals.set(w.to, { at: 'rcpt', code: 451, text: '4.2.0 mailbox temporarily unavailable' });
    const c = await trustedDraft(w);
    await until(async () => (await cardsRepository(env.deps.db).find(w.accountId, c.id))?.status === 'resolved', 30_000);
    expect(await fences(env, c.id)).toEqual(['not_sent', 'not_sent', 'not_sent']);
    await expectBounced(w, c.id, /^the mail relay deferred it 3 times in a row; last: 451 4\.2\.0/);
  });
});

describe('a DSN that comes back through the inbound listener', () => {
  it('Action: delayed counts as delayed and blocks nothing', async ({ env, smtp, inbound }) => {
    const w = await world({ env, smtp }, 'jane@acme.test');
    const c = await mailCard(w, 'subject-delayed');
    expect((await send(w, c.id)).status).toBe(200);
    const mailThread = await row(env, 'mail_threads', { card_id: c.id });
    const thread = (await sentThread(env.deps.db, env.config, mailThread.send_id))!;
    const raw = mailFixture('postfix-dsn-delayed', { replyToken: thread.replyToken, messageId: thread.messageId });
    const answer = await smtpSend(inbound.port, { from: '', to: [`bounces+${thread.replyToken}@localhost`], raw });
    expect(answer.code).toBe(250);
    await until(async () => {
      const r = await row(env, 'inbound_messages', { account_id: w.accountId });
      return r && r.status !== 'received' ? r : null;
    }, 15_000);
    expect(await email(w)).toMatchObject({ sent: 1, bounces: 0, delayed: 1 });
    expect(await blockEntry(w)).toBeUndefined();
    expect(await lead(w)).toMatchObject({ status: 'contacted' });
    expect(await card(w, c.id)).toMatchObject({ status: 'sent' });
  });
});
