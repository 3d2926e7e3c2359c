import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { draftExperimentMail, lookAtExperiment, proposeExperiment } from '../../src/experiments/experiments.service.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { readExperiments } from '../../src/experiments/reading.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { getResults } from '../helpers/scoreboard.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

/**
 * `/results` `experiments` through the API: an experiment proposed, approved through the review API, its mail drafted
 * and sent over SMTP by POST /review/{id}/send (the send path marks each contact exposed), and replies sent back over
 * SMTP to the service's inbound listener (the inbound-mail pool records each as its variant's outcome). The reply
 * window is 0 here, so a sent mail counts at once; the service-level check below shows the window holding them back.
 */
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), EXPERIMENT_REPLY_WINDOW_SECONDS: '0' },
  pools: ['shipments', 'inbound-mail'],
}));

const draft = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const CHALLENGER = 'Quick question about onboarding';

async function results(env: TestEnv, token: string) {
  const res = await env.api().get('/api/v1/results').set(auth(token));
  expect(res.status).toBe(200);
  return ResultsResponse.parse(res.body).results.experiments;
}

/** An account with 120 never-mailed contacts and an experiment proposed to them (the plan: 36 per variant, the minimum too). */
async function proposed(env: TestEnv, topic = 'onboarding') {
  const { accountId, token } = await env.tenant();
  for (let i = 0; i < 120; i++) await buildLead(env.deps.db, accountId, { contacts: [{ email: `person${i}@co${i}.test` }] });
  const out = await proposeExperiment(
    env.deps.db,
    { accountId, turnId: null, fromOutside: false },
    { thing: 'mail_subject', topic, draft, challengers: [CHALLENGER], baselineRate: 0.1, minimumDetectableEffect: 0.4 },
  );
  if (typeof out === 'string') throw new Error(out);
  return { accountId, token, ...out };
}

/** One mail an experiment sent, as the SMTP server got it. */
async function sentTo(smtp: TestSmtp, contact: string) {
  const got = smtp.received.filter((m) => m.to.includes(contact)).at(-1);
  if (!got) throw new Error(`nothing sent to ${contact}`);
  return simpleParser(got.raw);
}

/** The contact answers the mail it got (a Gmail reply, over SMTP to the inbound listener). */
async function replies(inbound: InboundSmtp, smtp: TestSmtp, contact: string) {
  const sent = await sentTo(smtp, contact);
  const replyTo = sent.replyTo!.value[0]!.address!;
  const replyToken = /^reply\+([0-9a-z]+)@/.exec(replyTo)![1]!;
  // Each reply its own sender and Message-ID (the fixture's one Message-ID would make the next reply a duplicate).
  const raw = mailFixture('gmail-reply', { replyToken, messageId: sent.messageId! })
    .toString('latin1')
    .replaceAll('jane@acme.test', contact)
    .replace(/^Message-ID: <[^>]+>/m, `Message-ID: <reply-${replyToken}@mail.gmail.com>`);
  expect((await smtpSend(inbound.port, { from: contact, to: [replyTo], raw })).code).toBe(250);
}

/**
 * The experiment approved and started; three contacts of each variant get its mail (every other contact is on the
 * block list, so drafting leaves them out), sent through the API; one A contact and two B contacts reply.
 */
async function running(env: TestEnv, inbound: InboundSmtp, smtp: TestSmtp) {
  const p = await proposed(env);
  const approved = await env.api().post(`/api/v1/review/${p.cardId}/answer`).set(auth(p.token)).send({ action: 'approve' });
  expect(approved.status).toBe(200);
  await runFollowUps(env.deps);
  const repo = experimentsRepository(env.deps.db);
  const assigned = await repo.assignments(p.accountId, p.id);
  const chosen = ['A', 'B'].flatMap((key) =>
    assigned
      .filter((a) => a.variant_key === key)
      .map((a) => a.contact)
      .sort()
      .slice(0, 3),
  );
  const others = assigned.map((a) => a.contact).filter((c) => !chosen.includes(c));
  const blocked = await env.api().post('/api/v1/blocklist').set(auth(p.token)).send({ entries: others });
  expect(blocked.status).toBeLessThan(300);
  const e = (await repo.get(p.accountId, p.id))!;
  expect(await draftExperimentMail(env.deps.db, e, 500)).toBe(6);
  const cards = await rows(env, 'review_cards', { account_id: p.accountId, source_type: 'mail_draft' }).select('id');
  expect(cards).toHaveLength(6);
  for (const card of cards) {
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(p.token)).send({});
    expect(res.status).toBe(200);
  }
  const [a1, , , b1, b2] = chosen as [string, string, string, string, string, string];
  for (const contact of [a1, b1, b2]) await replies(inbound, smtp, contact);
  await until(async () => {
    const done = await rows(env, 'inbound_messages', { account_id: p.accountId }).whereNot('status', 'received');
    return done.length === 3;
  }, 15_000);
  return { ...p, experiment: e };
}

describe('GET /results experiments', () => {
  it('shows a running experiment per variant: counts, rate, interval, the difference valid at any look, no chance of best', async ({
    env,
    inbound,
    smtp,
  }) => {
    const r = await running(env, inbound, smtp);
    const [x, ...rest] = await results(env, r.token);
    expect(rest).toEqual([]);
    expect(x).toMatchObject({
      id: r.id,
      status: 'running',
      thing: 'mail_subject',
      topic: 'onboarding',
      metric: 'reply_rate',
      startedAt: expect.any(Number),
      decidedAt: null,
      adoptedAt: null,
    });
    expect(x!.minimumPerVariant).toBeGreaterThan(0);
    expect(x!.plannedPerVariant).toBeGreaterThanOrEqual(x!.minimumPerVariant);
    const [a, b] = x!.variants;
    expect(a).toMatchObject({ key: 'A', description: `"${draft.subject}"`, exposures: 3, outcomes: 1, rate: 0.3333, sent: 3 });
    expect(b).toMatchObject({ key: 'B', description: `"${CHALLENGER}"`, exposures: 3, outcomes: 2, rate: 0.6667, sent: 3 });
    // Wilson 95% for 1 in 3 and 2 in 3.
    expect(a!.interval![0]).toBeCloseTo(0.0615, 3);
    expect(a!.interval![1]).toBeCloseTo(0.7923, 3);
    expect(b!.interval![0]).toBeCloseTo(0.2077, 3);
    expect(b!.interval![1]).toBeCloseTo(0.9385, 3);
    // Not decided: no chance of being best invites the early call; the difference carries an interval valid at any look.
    expect([a!.probabilityBest, b!.probabilityBest]).toEqual([null, null]);
    expect(a!.difference).toBeNull();
    expect(b!.difference).toMatchObject({ estimate: 0.3333, level: 0.97, relative: { estimate: 1 } });
    expect(b!.difference!.interval[0]).toBeLessThan(0);
    expect(b!.difference!.interval[1]).toBeGreaterThan(0.3333);
    expect(x!.decision).toEqual({
      state: 'collecting',
      winner: null,
      citation: expect.stringMatching(
        /^replies 1\/3 \(33\.3%\) vs 2\/3 \(66\.7%\), not decided: B − A \+33\.3 points \(\+100%\), 97% interval /,
      ),
      plannedReached: false,
    });
    // With a reply window of an hour, the mail just sent is not yet an exposure; `sent` counts it all the same.
    const held = await getResults(env.deps.db, r.accountId, undefined, Date.now(), true, {
      replyWindowMs: 60 * 60 * 1000,
      readExperiments,
    });
    expect(held.experiments.map((x) => x.variants.map((v) => [v.exposures, v.outcomes, v.rate, v.interval, v.sent]))).toEqual([
      [
        [0, 0, null, null, 3],
        [0, 0, null, null, 3],
      ],
    ]);
  });

  it('shows an ended experiment with the decision it ended on and its citation', async ({ env, inbound, smtp }) => {
    const r = await running(env, inbound, smtp);
    // Every contact sent or left out: the maintenance pass's look ends it short of the plan, without a winner.
    expect(await lookAtExperiment(env.deps.db, r.experiment, Date.now(), 0)).toBe('stopped');
    const [x] = await results(env, r.token);
    expect(x).toMatchObject({ id: r.id, status: 'no_winner', decidedAt: expect.any(Number) });
    expect(x!.decision).toEqual({
      state: 'stopped',
      winner: null,
      citation: expect.stringMatching(
        /^replies 1\/3 \(33\.3%\) vs 2\/3 \(66\.7%\), no winner: B − A \+33\.3 points \(\+100%\), 97% interval .*, ended at 3 of /,
      ),
      plannedReached: false,
    });
    // The result card cites the same figures.
    const card = await row(env, 'review_cards', { account_id: r.accountId, source_type: 'experiment_no_winner' });
    expect(card.payload.citation).toBe(x!.decision.citation);
    expect(x!.variants.map((v) => [v.exposures, v.outcomes, v.sent])).toEqual([
      [3, 1, 3],
      [3, 2, 3],
    ]);
  });

  it('reads a running experiment as collecting between looks, and the winner once a look decides and is adopted', async ({ env }) => {
    // 400 contacts (eight leads of 50) for a plan of more than a hundred per variant. Sending and answering that
    // much mail is the other tests' job: here exposures and replies go through the repository's doors that the
    // send path (exposed) and the inbound effects (replied) call.
    const { accountId, token } = await env.tenant();
    for (let l = 0; l < 8; l++) {
      const contacts = Array.from({ length: 50 }, (_, i) => ({ email: `p${l * 50 + i}@big${l}.test` }));
      await buildLead(env.deps.db, accountId, { contacts });
    }
    const out = await proposeExperiment(
      env.deps.db,
      { accountId, turnId: null, fromOutside: false },
      { thing: 'mail_subject', topic: 'renewals', draft, challengers: [CHALLENGER], baselineRate: 0.1, minimumDetectableEffect: 0.2 },
    );
    if (typeof out === 'string') throw new Error(out);
    expect((await approveCard(env, token, out.cardId)).status).toBe(200);
    await runFollowUps(env.deps);
    const repo = experimentsRepository(env.deps.db);
    const assigned = await repo.assignments(accountId, out.id);
    const at = Date.now() - 1_000;
    const replied: { accountId: string; cardId: string; positive: boolean; at: number }[] = [];
    const seen = { A: 0, B: 0 } as Record<string, number>;
    for (const [i, a] of assigned.entries()) {
      const cardId = `card_read${i}`;
      await repo.drafted(accountId, out.id, a.contact, cardId);
      await repo.exposed(accountId, cardId, at);
      // A: one reply in 10 (the plan's baseline, so nothing is replanned); B: one in 2.
      seen[a.variant_key]! += 1;
      if (seen[a.variant_key]! % (a.variant_key === 'A' ? 10 : 2) === 0) replied.push({ accountId, cardId, positive: true, at });
    }
    await repo.replied(replied);

    const [x] = await results(env, token);
    expect(x).toMatchObject({ id: out.id, status: 'running', decidedAt: null });
    // The maintenance pass has not looked: however clear the figures, nothing is decided yet.
    expect(x!.decision).toMatchObject({ state: 'collecting', winner: null, citation: expect.stringContaining('not decided') });
    expect(x!.decision.citation).not.toMatch(/probability/);
    expect(x!.variants[1]!.probabilityBest).toBeNull();
    expect(x!.variants.map((v) => v.sent)).toEqual([seen.A, seen.B]);

    const e = (await repo.get(accountId, out.id))!;
    expect(await lookAtExperiment(env.deps.db, e, Date.now(), 0)).toBe('winner');
    const [decided] = await results(env, token);
    expect(decided).toMatchObject({ status: 'decided', decidedAt: expect.any(Number), adoptedAt: null });
    const card = await row(env, 'review_cards', { account_id: accountId, source_type: 'experiment_winner' });
    expect(decided!.decision).toEqual({
      state: 'winner',
      winner: 'B',
      citation: card.payload.citation,
      plannedReached: expect.any(Boolean),
    });
    expect(decided!.decision.citation).toMatch(
      /^replies \d+\/\d+ \([\d.]+%\) vs \d+\/\d+ \([\d.]+%\), winner B: B − A \+[\d.]+ points \(\+\d+%\), 97% interval \+[\d.]+ to/,
    );
    // Ended: the chance of being best is shown now, beside the difference's interval valid at the look that decided.
    expect(decided!.variants[1]!.probabilityBest).toBeGreaterThan(0.99);
    expect(decided!.variants[1]!.difference!.interval[0]).toBeGreaterThan(0);

    expect((await approveCard(env, token, card.id)).status).toBe(200);
    await runFollowUps(env.deps);
    const [adopted] = await results(env, token);
    expect(adopted).toMatchObject({ status: 'decided', adoptedAt: expect.any(Number) });
  });

  it('shows an account only its own experiments: proposed, then dismissed; an account without any gets []', async ({ env }) => {
    const mine = await proposed(env, 'pricing');
    const other = await proposed(env, 'renewals');
    const none = await env.tenant();
    const [x, ...rest] = await results(env, mine.token);
    expect(rest).toEqual([]);
    expect(x).toMatchObject({ id: mine.id, status: 'proposed', topic: 'pricing', startedAt: null, decidedAt: null });
    expect(x!.decision).toEqual({ state: 'proposed', winner: null, citation: null, plannedReached: false });
    expect(x!.variants.map((v) => [v.key, v.exposures, v.rate, v.interval, v.sent])).toEqual([
      ['A', 0, null, null, 0],
      ['B', 0, null, null, 0],
    ]);
    expect((await results(env, other.token)).map((e) => e.id)).toEqual([other.id]);
    expect(await results(env, none.token)).toEqual([]);

    const dismissed = await env.api().post(`/api/v1/review/${mine.cardId}/dismiss`).set(auth(mine.token)).send({});
    await runFollowUps(env.deps);
    expect(dismissed.status).toBe(200);
    const [d] = await results(env, mine.token);
    expect(d).toMatchObject({ id: mine.id, status: 'dismissed', decidedAt: expect.any(Number) });
    expect(d!.decision.state).toBe('dismissed');
    expect((await results(env, other.token)).map((e) => e.id)).toEqual([other.id]);
  });

  it('reads experiments with one query for an account without any', async ({ env }) => {
    const { accountId } = await env.tenant();
    const seen: string[] = [];
    const listen = (q: { sql: string }) => seen.push(q.sql);
    env.deps.db.on('query', listen);
    try {
      expect((await getResults(env.deps.db, accountId, undefined, Date.now(), true, { readExperiments })).experiments).toEqual([]);
    } finally {
      env.deps.db.off('query', listen);
    }
    expect(seen.filter((sql) => /experiment/.test(sql))).toHaveLength(1);
  });
});
