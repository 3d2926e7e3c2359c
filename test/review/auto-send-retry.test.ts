import { describe, expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { cardAutoResolve } from '../../src/jobs/card-timers.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { cardsRepository, type Card } from '../../src/review/cards/cards.repository.js';
import { createCard } from '../helpers/cards.js';
import { AUTO_SEND_TRIES } from '../../src/review/timers.service.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

// A trusted mail draft whose automatic send finds the mail service refusing for now (451 before any
// message is written: certainly not sent) is tried again later on the same ladder, not left to a person.
it.override('options', ({ smtp }) => ({
  env: {
    ...smtpEnv(smtp),
    MAIL_RETRY_AFTER_SECONDS: '1',
    TRUST_AUTO_RESOLVE_AFTER: '3',
    TRUST_AUTO_RESOLVE_DELAY_MS: '200',
    CARD_SWEEP_MS: '600000',
    // The ladder's own tries run out here; blocking after repeated 451s is tested in test/mail/relay-refusals.test.ts.
    MAIL_SOFT_FAILURES_BEFORE_BLOCK: '100',
  },
  pools: ['card-timers', 'shipments'],
}));

const findCard = (env: TestEnv, accountId: string, id: string) => cardsRepository(env.deps.db).find(accountId, id);
const fences = async (env: TestEnv, cardId: string) =>
  (await rows(env, 'shipments', { card_id: cardId }).orderBy('created_at')).map((f: { status: string }) => f.status);
const delivered = (smtp: TestSmtp, to: string) => smtp.received.filter((m) => m.to.includes(to)).length;

async function trustedDraft(env: TestEnv, to: string): Promise<Card & { token: string }> {
  const { accountId, token } = await env.tenant();
  for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, accountId, 'email');
  const card = await createCard(env.deps, {
    id: newId('card'),
    accountId,
    kind: 'approval',
    sourceType: 'mail_draft',
    title: `Intro to ${to}`,
    payload: { work: 'email', to, draft: { subject: 'Hello', body: 'A short note.' } },
    actions: [],
    primaryLabel: '',
  });
  expect(card.autoResolveAt).not.toBeNull();
  return { ...card, token };
}

describe('an automatic send that finds the mail service out of reach', () => {
  it('is tried again with a doubling delay and sent exactly once when the service takes it', async ({ env, smtp }) => {
    smtp.mode = { kind: 'busy', times: 2 };
    const card = await trustedDraft(env, 'ada@retry.test');
    const sent = await until(async () => {
      const c = await findCard(env, card.accountId, card.id);
      return c?.status === 'sent' && c;
    }, 30_000);
    expect(sent.resolution).toMatchObject({ action: 'send', by: 'trust_ladder' });
    expect(await fences(env, card.id)).toEqual(['not_sent', 'not_sent', 'sent']);
    expect(delivered(smtp, 'ada@retry.test')).toBe(1);
    expect((sent.detail as { autoResolve: { tries: number } }).autoResolve.tries).toBe(3);
  }, 60_000);

  it(`waits for a person, saying why, after ${AUTO_SEND_TRIES} tries`, async ({ env, smtp }) => {
    smtp.mode = { kind: 'busy', times: 1_000 };
    const card = await trustedDraft(env, 'bo@retry.test');
    // The release that returns the card to pending sets the note and clears the deadline in one commit.
    const gaveUp = `Not sent automatically: the mail service could not be reached in ${AUTO_SEND_TRIES} tries; nothing was sent`;
    const given = await until(async () => {
      const c = await findCard(env, card.accountId, card.id);
      return (c?.detail as { note?: string } | null)?.note === gaveUp && c;
    }, 45_000);
    expect(given).toMatchObject({ status: 'pending', autoResolveAt: null });
    expect(await fences(env, card.id)).toEqual(Array(AUTO_SEND_TRIES).fill('not_sent'));
    expect(given.actions).toContain('send');
    expect(delivered(smtp, 'bo@retry.test')).toBe(0);
  }, 60_000);

  it('is never pending without its next deadline between tries: the release and the new deadline are one commit', async ({ env, smtp }) => {
    smtp.mode = { kind: 'busy', times: 3 };
    const card = await trustedDraft(env, 'di@retry.test');
    const seen: { status: string; autoResolveAt: number | null }[] = [];
    await until(
      async () => {
        const c = await findCard(env, card.accountId, card.id);
        if (c) seen.push({ status: c.status, autoResolveAt: c.autoResolveAt });
        return c?.status === 'sent';
      },
      30_000,
      2,
    );
    expect(seen.filter((c) => c.status === 'pending' && c.autoResolveAt === null)).toEqual([]);
    expect(await fences(env, card.id)).toEqual(['not_sent', 'not_sent', 'not_sent', 'sent']);
  }, 60_000);

  it('settles a card the mail service refused for good as a hard bounce: the address blocked, the card never sendable again', async ({
    env,
    smtp,
  }) => {
    smtp.mode = { kind: 'refuse', code: 554 };
    const card = await trustedDraft(env, 'ed@retry.test');
    const given = await until(async () => {
      const c = await findCard(env, card.accountId, card.id);
      return c?.status === 'resolved' && c;
    }, 30_000);
    expect(given).toMatchObject({ autoResolveAt: null, actions: [], primaryLabel: 'Bounced' });
    expect(given.resolution).toMatchObject({ action: 'send', by: 'trust_ladder', bounced: true, refusal: expect.stringMatching(/^554 /) });
    expect(await fences(env, card.id)).toEqual(['not_sent']);
    const entry = await row(env, 'blocklist_entries', { account_id: card.accountId, value: 'ed@retry.test' });
    expect(entry).toMatchObject({ source: 'agent', reason: expect.stringMatching(/^554 /) });
    expect(delivered(smtp, 'ed@retry.test')).toBe(0);
    smtp.mode = { kind: 'accept' };
  }, 60_000);

  it('lets a person who acts before the next try win: a dismissed card is never sent, and its next timer runs as a no-op', async ({
    env,
    smtp,
  }) => {
    smtp.mode = { kind: 'busy', times: 1_000 };
    const card = await trustedDraft(env, 'cy@retry.test');
    await until(async () => (await fences(env, card.id)).length >= 1);
    // Hold the ladder between two tries: with the card-timers queue paused and nothing active, no try can
    // claim the card, so the person certainly acts first. Every try ends with the card pending and its
    // next deadline (the release and the deadline are one commit), so that is the state we find.
    const queue = env.deps.queues.get('card-timers')!;
    await queue.pause();
    try {
      await until(async () => (await queue.getActiveCount()) === 0);
      const waiting = (await findCard(env, card.accountId, card.id))!;
      expect(waiting).toMatchObject({ status: 'pending', autoResolveAt: expect.any(Number) });
      const tried = await fences(env, card.id);
      const jobId = cardAutoResolve.key({ accountId: card.accountId, cardId: card.id, at: waiting.autoResolveAt! });
      const next = await pendingJob(queue, jobId);
      expect(next).toBeTruthy();
      // From here a try that ran anyway would be taken by the mail service and show up as a delivery.
      smtp.mode = { kind: 'accept' };
      const dismissed = await env.api().post(`/api/v1/review/${card.id}/dismiss`).set(auth(card.token)).send({});
      expect(dismissed.status).toBe(200);
      await queue.resume();
      // The event that proves the next try's timer ran: its job finished (whether or not BullMQ keeps it).
      await until(async () => (await queue.getJob(next!.id!))?.finishedOn !== undefined, 30_000);
      expect((await queue.getJob(next!.id!))!.returnvalue).toBe('noop');
      expect((await findCard(env, card.accountId, card.id))!.status).toBe('dismissed');
      expect(await fences(env, card.id)).toEqual(tried);
      expect(tried.every((f) => f === 'not_sent')).toBe(true);
      expect(delivered(smtp, 'cy@retry.test')).toBe(0);
    } finally {
      await queue.resume();
    }
  }, 60_000);
});
