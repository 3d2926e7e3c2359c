import { describe, expect } from 'vitest';
import { draftExperimentMail, lookAtExperiment, proposeExperiment } from '../../src/experiments/experiments.service.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { row, rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// What keeps an experiment's guarantee in the service: the sample ratio check pauses on a mismatch and a person
// resumes or ends it; a person's stop (dismissing its mail) names no winner; an outcome counts only within the
// plan's window after its mail; the plan's baseline is the account's own rate when it has the history.

const draft = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const DAY = 24 * 60 * 60 * 1000;

/** A running subject test on `n` contacts (a small plan: 10% against 40%), all its mail drafted. */
async function running(env: TestEnv, n: number) {
  const { accountId, token } = await env.tenant(['review:read', 'review:write', 'results:read']);
  for (let i = 0; i < n; i++) await buildLead(env.deps.db, accountId, { contacts: [{ email: `person${i}@g${i}.test` }] });
  const out = await proposeExperiment(
    env.deps.db,
    { accountId, turnId: null, fromOutside: false },
    { thing: 'mail_subject', topic: 'onboarding', draft, challengers: ['Quick question'], baselineRate: 0.1, minimumDetectableEffect: 0.3 },
  );
  if (typeof out === 'string') throw new Error(out);
  expect((await approveCard(env, token, out.cardId)).status).toBe(200);
  const repo = experimentsRepository(env.deps.db);
  const e = (await repo.get(accountId, out.id))!;
  await draftExperimentMail(env.deps.db, e, 1000);
  const assigned = await repo.assignments(accountId, out.id);
  return { accountId, token, id: out.id, repo, assigned };
}

const dismiss = (env: TestEnv, token: string, cardId: string) =>
  env.api().post(`/api/v1/review/${cardId}/dismiss`).set(auth(token)).send({});

describe("an experiment's guarantee in the service", () => {
  it('pauses on a sample ratio mismatch (a reviewer dismissing one variant), files a review card, and waits for a person', async ({
    env,
  }) => {
    const x = await running(env, 200);
    const at = Date.now() - 1000;
    let dismissed = 0;
    for (const a of x.assigned) {
      // Three in four of B's mail dismissed by a reviewer (far past chance at this size); everything else goes out.
      if (a.variant_key === 'B' && dismissed++ % 4 !== 0) expect((await dismiss(env, x.token, a.card_id!)).status).toBe(200);
      else await x.repo.exposed(x.accountId, a.card_id!, at);
    }
    await runFollowUps(env.deps);
    const e = (await x.repo.get(x.accountId, x.id))!;
    expect(await lookAtExperiment(env.deps.db, e, Date.now(), 0)).toBe('paused');
    const paused = (await x.repo.get(x.accountId, x.id))!;
    expect(paused.status).toBe('paused');
    expect(paused.winnerKey).toBeNull();
    const card = await row(env, 'review_cards', { account_id: x.accountId, source_type: 'experiment_mismatch' });
    expect(card).toMatchObject({ kind: 'approval', status: 'pending' });
    expect(card.summary).toMatch(
      /not the even split the experiment was planned with: A \d+ \(expected about \d+\), B \d+ \(expected about \d+\)/,
    );
    expect(card.prompt).toContain('approve to resume it');
    // Paused, it declares nothing: the pass does not look at it, /results reads it as paused and not decided.
    const results = await env.api().get('/api/v1/results').set(auth(x.token));
    const [read] = results.body.results.experiments;
    expect(read).toMatchObject({ status: 'paused', decision: { state: 'collecting', winner: null } });
    expect(read.decision.citation).toContain('not decided');

    // A person resumes it: running again, the check reading only what comes after.
    expect((await env.api().post(`/api/v1/review/${card.id}/answer`).set(auth(x.token)).send({ action: 'approve' })).status).toBe(200);
    await runFollowUps(env.deps);
    const resumed = (await x.repo.get(x.accountId, x.id))!;
    expect(resumed.status).toBe('running');
    expect(resumed.draft.ratioFrom).toEqual(e.plan.variants.map((_, i) => paused.decision!.variants[i]!.exposures));
  });

  it('ends with no winner when a person ends the paused experiment', async ({ env }) => {
    const x = await running(env, 200);
    const at = Date.now() - 1000;
    let dismissed = 0;
    for (const a of x.assigned) {
      if (a.variant_key === 'A' && dismissed++ % 4 !== 0) expect((await dismiss(env, x.token, a.card_id!)).status).toBe(200);
      else await x.repo.exposed(x.accountId, a.card_id!, at);
    }
    await runFollowUps(env.deps);
    expect(await lookAtExperiment(env.deps.db, (await x.repo.get(x.accountId, x.id))!, Date.now(), 0)).toBe('paused');
    const card = await row(env, 'review_cards', { account_id: x.accountId, source_type: 'experiment_mismatch' });
    expect((await dismiss(env, x.token, card.id)).status).toBe(200);
    await runFollowUps(env.deps);
    const ended = (await x.repo.get(x.accountId, x.id))!;
    expect(ended).toMatchObject({ status: 'no_winner', winnerKey: null, decidedAt: expect.any(Number) });
    expect(ended.decision).toMatchObject({ state: 'stopped', stoppedBy: 'person' });
  });

  it("names no winner when a person's dismissals end it early, however clear the figures", async ({ env }) => {
    const x = await running(env, 200);
    const at = Date.now() - 1000;
    const seen: Record<string, number> = { A: 0, B: 0 };
    const replied: { accountId: string; cardId: string; positive: boolean; at: number }[] = [];
    for (const a of x.assigned) {
      const k = seen[a.variant_key]!++;
      // The last few of each variant dismissed alike (no ratio mismatch): nothing is left pending.
      if (k >= 60) {
        expect((await dismiss(env, x.token, a.card_id!)).status).toBe(200);
        continue;
      }
      await x.repo.exposed(x.accountId, a.card_id!, at);
      // B answers every other time, A one in twenty: a winner if the rule could name one.
      if (k % (a.variant_key === 'A' ? 20 : 2) === 0) replied.push({ accountId: x.accountId, cardId: a.card_id!, positive: true, at });
    }
    await x.repo.replied(replied);
    await runFollowUps(env.deps);
    const e = (await x.repo.get(x.accountId, x.id))!;
    expect(await lookAtExperiment(env.deps.db, e, Date.now(), 0)).toBe('stopped');
    const ended = (await x.repo.get(x.accountId, x.id))!;
    expect(ended).toMatchObject({ status: 'no_winner', winnerKey: null });
    const card = await row(env, 'review_cards', { account_id: x.accountId, source_type: 'experiment_no_winner' });
    expect(card.summary).toContain('ended early by a person, so no winner is declared');
    expect(card.summary).not.toMatch(/probability/);
    expect(await rows(env, 'review_cards', { account_id: x.accountId, source_type: 'experiment_winner' })).toEqual([]);
  });

  it("counts an outcome only within the plan's window after its mail, the same for every variant", async ({ env }) => {
    const x = await running(env, 200);
    const e = (await x.repo.get(x.accountId, x.id))!;
    expect(e.plan.outcomeWindowMs).toBe(3 * DAY);
    const sent = Date.now() - 10 * DAY;
    const [first, second] = [x.assigned.find((a) => a.variant_key === 'A')!, x.assigned.find((a) => a.variant_key === 'B')!];
    for (const a of [first, second]) await x.repo.exposed(x.accountId, a.card_id!, sent);
    // A's contact answers within a day; B's five days later, after the window: it does not count.
    await x.repo.replied([
      { accountId: x.accountId, cardId: first.card_id!, positive: false, at: sent + DAY },
      { accountId: x.accountId, cardId: second.card_id!, positive: false, at: sent + 5 * DAY },
    ]);
    const { counts } = await x.repo.counts(e, Date.now() - 3 * DAY);
    expect(counts).toEqual([
      { exposures: 1, outcomes: 1 },
      { exposures: 1, outcomes: 0 },
    ]);
  });

  it("plans on the account's own rate when it has the history, and says so on the card", async ({ env }) => {
    const x = await running(env, 200);
    // This experiment's 1,200 past exposures, 120 of them answered within the window: a 10% reply rate of the account's own.
    const past = Date.now() - 30 * DAY;
    await env.deps.db('experiment_assignments').insert(
      Array.from({ length: 1200 }, (_, i) => ({
        account_id: x.accountId,
        experiment_id: x.id,
        contact: `history${i}@past.test`,
        variant_index: 0,
        variant_key: 'A',
        assigned_at: past,
        exposed_at: past,
        replied_at: i % 10 === 0 ? past + DAY : null,
      })),
    );
    for (let i = 0; i < 200; i++) await buildLead(env.deps.db, x.accountId, { contacts: [{ email: `next${i}@h${i}.test` }] });
    const out = await proposeExperiment(
      env.deps.db,
      { accountId: x.accountId, turnId: null, fromOutside: false },
      {
        thing: 'mail_subject',
        topic: 'pricing',
        draft,
        challengers: ['Pricing, plainly'],
        baselineRate: 0.5,
        minimumDetectableEffect: 0.3,
      },
    );
    if (typeof out === 'string') throw new Error(out);
    const planned = (await x.repo.get(x.accountId, out.id))!.plan;
    expect(planned.baselineRate).toBeCloseTo(120 / 1200, 10);
    expect(planned.baselineSource).toMatchObject({ kind: 'measured', outcomes: 120, exposures: 1200 });
    const card = await row(env, 'review_cards', { account_id: x.accountId, id: out.cardId });
    expect(card.prompt).toContain("is this account's own reply rate: 120 replies in 1,200 before this experiment");
  });
});
