import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { startTurn } from '../helpers/agent.js';
import { MailNotSettled } from '../../src/errors.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { applyOutcome } from '../../src/inbound/effects.service.js';
import { sequenceIdFor, sequencesRepository } from '../../src/mail/sequences.repository.js';
import { threadsRepository } from '../../src/mail/threads.repository.js';
import { cardsRepository, type Card } from '../../src/review/cards/cards.repository.js';
import { memoryNotesRepository } from '../../src/memory/memory-notes.repository.js';
import { MAX_STEP_TRIES, shipSequenceStep, sweepSequences } from '../../src/shipping/sequence-runner.js';
import { setupAgentEnv } from '../helpers/agent.js';
import { buildCard } from '../helpers/factories.js';
import { completion } from '../helpers/fake-llm.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { smtpEnv, type SmtpMode, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// The soft-failure block is tested in test/mail/relay-refusals.test.ts; here a step's tries run out first.
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), MAIL_SWEEP_MS: '200', MAIL_SOFT_FAILURES_BEFORE_BLOCK: '100' },
  pools: ['agent-turns', 'shipments'],
}));

const DAY = 86_400_000;

/** A sequence card as the agent's ship tool files it: a first mail and two follow-ups. */
async function sequenceCard(env: TestEnv, accountId: string, to: string, tag: string, second = `second ${tag}`): Promise<Card> {
  return buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'sequence',
    title: `Sequence to ${to}`,
    payload: {
      work: 'sequence',
      to,
      draft: { subject: `Idea ${tag}`, body: `first ${tag}` },
      steps: [
        { body: second, delayDays: 3 },
        { body: `third ${tag}`, delayDays: 4 },
      ],
    },
  });
}

const mailsTo = (smtp: TestSmtp, to: string) => smtp.received.filter((m) => m.to.includes(to));
const seqOf = (env: TestEnv, accountId: string, cardId: string) => sequencesRepository(env.deps.db).find(accountId, sequenceIdFor(cardId));
/** Time passes: the sequence's next step is due now. */
const due = (env: TestEnv, cardId: string) =>
  env.deps
    .db('mail_sequences')
    .where({ card_id: cardId })
    .update({ next_at: Date.now() - 1 });

/** Time passes: the next step is due, and its job (queued for then) runs now in the file's shipments pool. */
async function dueNow(env: TestEnv, cardId: string) {
  await due(env, cardId);
  const seq = (await rows(env, 'mail_sequences', { card_id: cardId }))[0]!;
  await (await pendingJob(env.deps.queues.get('shipments')!, `sequence-step-${seq.id}-${seq.next_step}`))?.promote();
}

/** Runs `body` with the SMTP server answering as `mode`, then as before. */
async function whileSmtp<T>(smtp: TestSmtp, mode: SmtpMode, body: () => Promise<T>): Promise<T> {
  const before = smtp.mode;
  smtp.mode = mode;
  try {
    return await body();
  } finally {
    smtp.mode = before;
  }
}

/** Waits until the card's sequence has stopped, and returns it. */
const stopped = (env: TestEnv, accountId: string, cardId: string) =>
  until(async () => {
    const seq = await seqOf(env, accountId, cardId);
    return seq?.status === 'stopped' ? seq : null;
  }, 15_000);

async function approve(env: TestEnv, token: string, cardId: string) {
  const res = await approveCard(env, token, cardId);
  expect(res.status).toBe(200);
}

describe('sequences', () => {
  it('"start a sequence to ADDRESS about TOPIC" files a sequence card with a first mail and two follow-ups', async ({ env, smtp }) => {
    const { accountId } = await env.tenant();
    await startTurn(env.deps, {
      accountId,
      kind: 'message',
      origin: 'dashboard',
      text: 'start a sequence to jane@acme.test about onboarding',
    });
    const card = await until(async () => (await rows(env, 'review_cards', { account_id: accountId, source_type: 'sequence' }))[0]);
    expect(card.payload).toMatchObject({ work: 'sequence', to: 'jane@acme.test', draft: { subject: 'Onboarding' } });
    expect(card.payload.steps.map((s: { delayDays: number }) => s.delayDays)).toEqual([3, 4]);
    expect(card.status).toBe('pending');
    expect(smtp.received.filter((m) => m.to.includes('jane@acme.test'))).toEqual([]);
  });

  it('ships the first mail on approval, then each follow-up when due, in the same thread, once, and finishes', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'ann@seq.test';
    const card = await sequenceCard(env, accountId, to, 'a');
    await approve(env, token, card.id);
    expect(mailsTo(smtp, to)).toHaveLength(1);
    const seq = (await seqOf(env, accountId, card.id))!;
    expect(seq).toMatchObject({ status: 'active', nextStep: 1 });
    expect(seq.nextAt! - Date.now()).toBeGreaterThan(3 * DAY - 60_000);
    const sent = (await cardsRepository(env.deps.db).find(accountId, card.id))!;
    expect(sent).toMatchObject({ status: 'sent', actions: ['dismiss'], primaryLabel: 'Running' });
    expect(sent.resolution).toMatchObject({ sequence: 'running', sequenceId: seq.id });
    // Its follow-up waits as a delayed job.
    const queue = env.deps.queues.get('shipments')!;
    expect(await pendingJob(queue, `sequence-step-${seq.id}-1`)).toBeTruthy();

    // Not due yet: nothing ships.
    expect(await shipSequenceStep(env.deps, accountId, seq.id, 1)).toBe('not_due');
    expect(mailsTo(smtp, to)).toHaveLength(1);

    await due(env, card.id);
    expect(await shipSequenceStep(env.deps, accountId, seq.id, 1)).toBe('shipped');
    // A repeated job for a step that shipped does nothing.
    expect(await shipSequenceStep(env.deps, accountId, seq.id, 1)).toBe('not_active');
    await due(env, card.id);
    expect(await shipSequenceStep(env.deps, accountId, seq.id, 2)).toBe('shipped');

    const mails = await Promise.all(mailsTo(smtp, to).map((m) => simpleParser(m.raw)));
    expect(mails.map((m) => m.text?.trim())).toEqual(['first a', 'second a', 'third a']);
    expect(mails.map((m) => m.subject)).toEqual(['Idea a', 'Re: Idea a', 'Re: Idea a']);
    const firstId = mails[0]!.messageId;
    expect(mails[1]!.inReplyTo).toBe(firstId);
    expect(mails[2]!.inReplyTo).toBe(firstId);
    // Each step has its own thread (reply token), all naming the sequence.
    const threads = await rows(env, 'mail_threads', { card_id: card.id }).orderBy('step');
    expect(threads.map((t) => [t.step, t.sequence_id])).toEqual([
      [0, seq.id],
      [1, seq.id],
      [2, seq.id],
    ]);
    expect(new Set(mails.map((m) => m.replyTo?.text)).size).toBe(3);

    expect(await seqOf(env, accountId, card.id)).toMatchObject({ status: 'finished', nextStep: 3, nextAt: null });
    const done = (await cardsRepository(env.deps.db).find(accountId, card.id))!;
    expect(done).toMatchObject({ status: 'sent', actions: [], primaryLabel: 'Sent' });
    expect(done.resolution).toMatchObject({ sequence: 'finished' });
    const sends = await rows(env, 'channel_events', { account_id: accountId, channel: 'email', type: 'sent' });
    expect(sends).toHaveLength(3);
  });

  it('ships a due step once when many jobs race for it', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'race@seq.test';
    const card = await sequenceCard(env, accountId, to, 'r');
    await approve(env, token, card.id);
    await due(env, card.id);
    const id = sequenceIdFor(card.id);
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => shipSequenceStep(env.deps, accountId, id, 1)));
    expect(outcomes.filter((o) => o === 'shipped')).toHaveLength(1);
    expect(mailsTo(smtp, to)).toHaveLength(2);
    expect(await rows(env, 'shipments', { card_id: card.id, step: 1 })).toHaveLength(1);
  });

  it('stops at once on a reply from the recipient: no later step ships', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'reply@seq.test';
    const card = await sequenceCard(env, accountId, to, 'p');
    await approve(env, token, card.id);
    const thread = (await threadsRepository(env.deps.db).ofCardStep(accountId, card.id, 0))!;
    await env.deps.db.transaction((trx) =>
      applyOutcome(trx, env.deps.config, thread, { kind: 'reply', replyKind: 'interested', text: 'yes' }, { id: 'in_1', at: Date.now() }),
    );
    expect(await seqOf(env, accountId, card.id)).toMatchObject({ status: 'stopped', stopReason: 'the recipient replied' });
    const stopped = (await cardsRepository(env.deps.db).find(accountId, card.id))!;
    expect(stopped.actions).toEqual([]);
    expect(stopped.resolution).toMatchObject({ sequence: 'stopped', sequenceStopReason: 'the recipient replied' });
    await due(env, card.id);
    expect(await shipSequenceStep(env.deps, accountId, sequenceIdFor(card.id), 1)).toBe('not_active');
    expect(mailsTo(smtp, to)).toHaveLength(1);
  });

  it('stops when a person dismisses the running sequence, and when the address goes on the block list', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write', 'leads:write']);
    const a = await sequenceCard(env, accountId, 'dismiss@seq.test', 'd');
    const b = await sequenceCard(env, accountId, 'blocked@seq.test', 'b');
    await approve(env, token, a.id);
    await approve(env, token, b.id);

    const res = await env.api().post(`/api/v1/review/${a.id}/dismiss`).set(auth(token)).send({ reason: 'wrong list' });
    expect(res.status).toBe(200);
    expect(await seqOf(env, accountId, a.id)).toMatchObject({ status: 'stopped', stopReason: 'a person dismissed the sequence' });
    const dismissed = (await cardsRepository(env.deps.db).find(accountId, a.id))!;
    expect(dismissed.status).toBe('dismissed');
    expect(dismissed.resolution).toMatchObject({ action: 'dismiss', sequence: 'stopped', sendId: expect.any(String) });
    const again = await env.api().post(`/api/v1/review/${a.id}/dismiss`).set(auth(token)).send({});
    expect(again.status).toBe(409);

    const blocked = await env
      .api()
      .post('/api/v1/blocklist')
      .set(auth(token))
      .send({ entries: ['blocked@seq.test'] });
    expect(blocked.status).toBeLessThan(300);
    await due(env, a.id);
    await due(env, b.id);
    expect(await shipSequenceStep(env.deps, accountId, sequenceIdFor(a.id), 1)).toBe('not_active');
    expect(await shipSequenceStep(env.deps, accountId, sequenceIdFor(b.id), 1)).toBe('stopped');
    expect(await seqOf(env, accountId, b.id)).toMatchObject({ status: 'stopped', stopReason: 'blocked@seq.test is on the block list' });
    expect(mailsTo(smtp, 'dismiss@seq.test')).toHaveLength(1);
    expect(mailsTo(smtp, 'blocked@seq.test')).toHaveLength(1);
  });

  it('the mail sweep queues an overdue step whose job was lost, and the pool ships it', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'swept@seq.test';
    const card = await sequenceCard(env, accountId, to, 's');
    await approve(env, token, card.id);
    const seq = (await seqOf(env, accountId, card.id))!;
    await (await pendingJob(env.deps.queues.get('shipments')!, `sequence-step-${seq.id}-1`))!.remove();
    await env.deps
      .db('mail_sequences')
      .where({ card_id: card.id })
      .update({ next_at: Date.now() - 60_000 });
    await until(async () => mailsTo(smtp, to).length === 2, 15_000);
    // The step settles (and the sequence moves on) just after the server took the mail.
    await until(async () => (await seqOf(env, accountId, card.id))?.nextStep === 2, 15_000);
    expect(await sweepSequences(env.deps, 1)).toBe(0);
    expect(mailsTo(smtp, to)).toHaveLength(2);
  });

  it('refuses a sequence to something that is not an address, and says so', async ({ agent, env }) => {
    const { accountId, token } = await env.tenant();
    const answer = await agent.say(token, 'start a sequence to not-an-address about x');
    expect(answer.replies.map((r) => r.text)).toEqual(['not-an-address does not look like an email address, so I drafted nothing.']);
    expect(await rows(env, 'review_cards', { account_id: accountId })).toEqual([]);
  });

  it('refuses a sequence whose follow-ups are not a valid sequence when the agent files it, and tells the model why', async ({ llm }) => {
    // The llm brain can propose any follow-ups (the offline brain only valid ones): a world of its own.
    const world = await setupAgentEnv({ AGENT_BRAIN: 'llm', LLM_BASE_URL: llm.baseUrl, LLM_API_KEY: 'sk-test', LLM_MAX_RETRIES: '0' });
    try {
      const { accountId, token } = await world.tenant();
      const ship = (details: unknown, to: string | null = 'val@seq.test') => ({
        work: 'sequence',
        title: 'Sequence to Val',
        ...(to ? { to } : {}),
        subject: 'Hello',
        body: 'first',
        details,
      });
      llm.requests.length = 0;
      llm.script(
        () => ({
          body: completion(null, [
            { id: 'call_1', name: 'ship', args: ship({ steps: [{ body: 'too soon', delayDays: 0 }] }) },
            { id: 'call_2', name: 'ship', args: ship({ steps: Array.from({ length: 6 }, (_, i) => ({ body: `n${i}`, delayDays: 1 })) }) },
            { id: 'call_3', name: 'ship', args: ship({ steps: [{ body: 'later', delayDays: 1 }] }, null) },
          ]),
        }),
        () => ({ body: completion('Nothing drafted.') }),
      );
      const answer = await world.say(token, 'start a sequence to Val');
      expect(answer.replies.map((r) => r.text)).toEqual(['Nothing drafted.']);
      const results = llm.requests[1]!.body.messages.filter((m) => m.role === 'tool');
      expect(results.map((m) => [m.tool_call_id, m.content])).toEqual([
        ['call_1', expect.stringMatching(/^error: not a valid sequence \(steps\.0\.delayDays: .+\), so nothing was drafted$/)],
        ['call_2', expect.stringMatching(/^error: not a valid sequence \(steps: .+\), so nothing was drafted$/)],
        ['call_3', 'error: not a valid sequence (a sequence needs `to`), so nothing was drafted'],
      ]);
      expect(await rows(world, 'review_cards', { account_id: accountId })).toEqual([]);
    } finally {
      await world.close();
    }
  });

  it(`stops a sequence whose step could not be sent after ${MAX_STEP_TRIES} tries`, async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'tries@seq.test';
    const card = await sequenceCard(env, accountId, to, 't');
    await approve(env, token, card.id);
    await due(env, card.id);
    const id = sequenceIdFor(card.id);
    // The mail service says "try later" to everything: each try voids its fence (the sweep's jobs try too).
    const outcome = await whileSmtp(smtp, { kind: 'refuse', code: 451 }, async () => {
      for (let i = 0; i <= 2 * MAX_STEP_TRIES; i++) {
        const o = await shipSequenceStep(env.deps, accountId, id, 1).catch((err: unknown) => {
          if (err instanceof MailNotSettled && err.error === 'unavailable') return 'refused' as const;
          throw err;
        });
        if (o !== 'refused' && o !== 'in_flight') return o;
      }
      return 'still active';
    });
    expect(outcome).toBe('stopped');
    const reason = `step 1 could not be sent after ${MAX_STEP_TRIES} tries`;
    expect(await seqOf(env, accountId, card.id)).toMatchObject({ status: 'stopped', stopReason: reason, nextStep: 1 });
    const fences = await rows(env, 'shipments', { card_id: card.id, step: 1 });
    expect(fences.length).toBeGreaterThanOrEqual(MAX_STEP_TRIES);
    expect(fences.filter((f) => f.status !== 'not_sent')).toEqual([]);
    expect((await cardsRepository(env.deps.db).find(accountId, card.id))?.resolution).toMatchObject({
      sequence: 'stopped',
      sequenceStopReason: reason,
    });
    // The service is back: nothing more ships for the stopped sequence.
    expect(await shipSequenceStep(env.deps, accountId, id, 1)).toBe('not_active');
    expect(mailsTo(smtp, to)).toHaveLength(1);
  });

  it('stops a sequence whose follow-up the mail service refuses for good (a hard bounce), through the step job', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'refused@seq.test';
    const card = await sequenceCard(env, accountId, to, 'x');
    await approve(env, token, card.id);
    const seq = await whileSmtp(smtp, { kind: 'refuse', code: 550 }, async () => {
      await dueNow(env, card.id);
      return stopped(env, accountId, card.id);
    });
    expect(seq.stopReason).toBe('the address bounced');
    expect(seq.nextStep).toBe(1);
    expect(await row(env, 'blocklist_entries', { account_id: accountId, value: to })).toMatchObject({
      source: 'agent',
      reason: expect.stringMatching(/^550 /),
    });
    const fences = await rows(env, 'shipments', { card_id: card.id, step: 1 });
    expect(fences.length).toBeGreaterThanOrEqual(1);
    expect(fences.filter((f) => f.status !== 'not_sent')).toEqual([]);
    expect((await cardsRepository(env.deps.db).find(accountId, card.id))?.resolution).toMatchObject({
      sequence: 'stopped',
      sequenceStopReason: seq.stopReason,
    });
    expect(await shipSequenceStep(env.deps, accountId, seq.id, 1)).toBe('not_active');
    expect(mailsTo(smtp, to)).toHaveLength(1);
  });

  it("stops a sequence whose follow-up quotes the account's private notes, before anything of it ships", async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant(['review:read', 'review:write']);
    const to = 'private@seq.test';
    const note = 'our margins on freight brokers are thin this year';
    const card = await sequenceCard(env, accountId, to, 'n', `Hi again. Between us, ${note}, so we can talk price.`);
    await approve(env, token, card.id);
    // Told to the agent after the first mail went: the follow-up written before now quotes it.
    await memoryNotesRepository(env.deps.db).remember(accountId, note, null, Date.now());
    await dueNow(env, card.id);
    const seq = await stopped(env, accountId, card.id);
    expect(seq).toMatchObject({ stopReason: "step 1 quotes the account's private notes", nextStep: 1 });
    expect(await rows(env, 'shipments', { card_id: card.id, step: 1 })).toEqual([]);
    expect((await cardsRepository(env.deps.db).find(accountId, card.id))?.resolution).toMatchObject({ sequence: 'stopped' });
    expect(mailsTo(smtp, to)).toHaveLength(1);
    expect(smtp.received.filter((m) => m.raw.includes('freight brokers'))).toEqual([]);
  });
});
