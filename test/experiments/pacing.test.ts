import { describe, expect } from 'vitest';
import { draftExperimentMail } from '../../src/experiments/experiments.service.js';
import { type PassConfig, runExperiments } from '../../src/experiments/pacing.js';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { type Experiment, experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { exposeExperimentMail } from '../../src/experiments/variants/send-window.js';
import { newId } from '../../src/ids.js';
import { planExperiment } from '../../src/statistics/plan.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

/**
 * The maintenance pass's pacing and fairness (docs/decisions/experiments-pacing.md, "Pacing: a wave per look", "Fair across
 * accounts"), below the API, on a clock the test moves: runExperiments at a given `now`. A mail goes out as the shipping
 * path's on-sent hook records it (exposeExperimentMail), at a time the test names; a reply as the inbound path applies
 * it (experimentsRepository.replied). Nothing else is stood in for: the pass drafts real mail cards and records looks.
 */

const DRAFT = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const HOUR = 3_600_000;
const WINDOW = 72 * HOUR;
const PASS = 5 * 60_000;
/** The settings' defaults (src/config/experiments.ts) with a three-day reply window. */
const CONFIG: PassConfig = { replyWindowMs: WINDOW, draftBatch: 200, passLimit: 20, passBatches: 10, waveShare: 0.05 };

/** A running subject test on `accountId`, stored and started as the experiment's card starts it, with `size` contacts. */
async function running(
  env: TestEnv,
  accountId: string,
  size: number,
  rates: { baselineRate: number; minimumDetectableEffect: number },
  at: number,
) {
  const id = newId('exp');
  const variants = ['Onboarding in a day', 'Quick question about onboarding'].map((value, i) => ({
    key: 'AB'[i]!,
    description: `"${value}"`,
    value,
  }));
  const plan = planExperiment({
    id,
    hypothesis: 'the subject changes the reply rate',
    subject: 'the mail subject',
    variants,
    metric: 'reply_rate',
    audience: 'contacts never mailed',
    ...rates,
  });
  const audience = Array.from({ length: size }, (_, i) => ({ leadId: null, email: `p${i}@${id.slice(-8)}-${i}.test` }));
  const repo = experimentsRepository(env.deps.db);
  await repo.insert({
    accountId,
    id,
    cardId: null,
    thing: 'mail_subject',
    topic: 'onboarding',
    plan: { ...plan, variants },
    draft: DRAFT,
    audience,
    createdAt: at,
  });
  await repo.start(accountId, id, at);
  return (await repo.get(accountId, id))!;
}

/** The experiment's assignments with a mail card: the contacts its waves mailed or will, per variant key. */
async function drafted(env: TestEnv, e: Experiment) {
  const list = (await experimentsRepository(env.deps.db).assignments(e.accountId, e.id)).filter((a) => a.card_id !== null);
  return { all: list, A: list.filter((a) => a.variant_key === 'A').length, B: list.filter((a) => a.variant_key === 'B').length };
}

/** Every drafted, unsent mail of `e` goes out at `at` (the on-sent hook the shipping path calls after the fence). */
async function sendAll(env: TestEnv, e: Experiment, at: number) {
  for (const a of (await drafted(env, e)).all.filter((x) => x.exposed_at === null)) {
    await exposeExperimentMail(env.deps.db, e.accountId, { id: a.card_id!, payload: { experimentId: e.id } }, at);
  }
}

// Fairness first: it counts every running experiment of the database, and the pacing tests leave theirs running.
/**
 * Replies to the sent mail of `e` at `at`, as the inbound path applies them: every `every`-th contact of each variant
 * (by contact, so a run repeats), `every` by variant key. The control answers near the plan's 10% baseline, so the
 * first look is not put off to replan.
 */
async function reply(env: TestEnv, e: Experiment, every: Record<string, number>, at: number) {
  const sent = (await drafted(env, e)).all.filter((a) => a.exposed_at !== null).sort((x, y) => (x.contact < y.contact ? -1 : 1));
  const items = ['A', 'B'].flatMap((k) => sent.filter((a) => a.variant_key === k).filter((_, i) => i % every[k]! === 0));
  await experimentsRepository(env.deps.db).replied(items.map((a) => ({ accountId: e.accountId, cardId: a.card_id!, positive: true, at })));
}

describe('fair across accounts', () => {
  it('50 accounts × 5 running experiments: every look is taken at its schedule or the pass after (latest: one pass late)', async ({
    env,
  }) => {
    const db = env.deps.db;
    const t0 = Date.UTC(2026, 10, 5, 9);
    const list: Experiment[] = [];
    for (let a = 0; a < 50; a++) {
      const account = await createAccount(db, `Fair ${a}`);
      // A plan of about 30 per variant on an audience of 2: one wave, and its look is the last (nothing left to mail).
      for (let k = 0; k < 5; k++) list.push(await running(env, account.id, 2, { baselineRate: 0.1, minimumDetectableEffect: 0.4 }, t0 + a));
    }
    const mine = new Set(list.map((e) => e.id));

    // Drafting: the first pass attends to 200 (10 batches of 20), round-robin, so every account has 4 of its 5 drafted.
    const first = await runExperiments(db, CONFIG, undefined, t0 + PASS);
    expect(first.attended).toBe(200);
    const draftedIn = (await rows(env, 'experiment_assignments', {})).filter((r) => mine.has(r.experiment_id) && r.card_id !== null);
    const perAccount = new Map<string, Set<string>>();
    for (const r of draftedIn) perAccount.set(r.account_id, (perAccount.get(r.account_id) ?? new Set()).add(r.experiment_id));
    expect([...perAccount.values()].map((s) => s.size)).toEqual(Array(50).fill(4));
    await runExperiments(db, CONFIG, undefined, t0 + 2 * PASS);

    const sentAt = t0 + 3 * PASS;
    for (const e of list) await sendAll(env, e, sentAt);
    const due = sentAt + WINDOW;
    // The two passes after the sends give every experiment its schedule (250 to see, 200 a pass); then none is due
    // until the window ends. From a pass before that, passes every PASS until every look is taken (ten at most).
    const times = [sentAt + PASS, sentAt + 2 * PASS, ...Array.from({ length: 11 }, (_, k) => due + (k - 1) * PASS)];
    const open = async () => (await rows(env, 'experiments', { status: 'running' })).filter((r) => mine.has(r.id)).length;
    for (const now of times) {
      const { attended } = await runExperiments(db, CONFIG, undefined, now);
      if (now === due - PASS) expect(attended).toBe(0);
      if (now < due) expect(await open()).toBe(250);
      else if ((await open()) === 0) break;
    }
    const scheduled = (await rows(env, 'experiments', {})).filter((r) => mine.has(r.id)).map((r) => Number(r.next_look_at));
    expect(new Set(scheduled)).toEqual(new Set([due]));
    const ended = (await rows(env, 'experiments', {})).filter((r) => mine.has(r.id));
    expect(ended.every((r) => r.status !== 'running')).toBe(true);
    const lateness = ended.map((r) => Number(r.decided_at) - due);
    const latestPasses = Math.max(...lateness) / PASS;
    // None early, and the latest one pass after its schedule: 250 due at once, 200 a pass.
    expect(Math.min(...lateness)).toBeGreaterThanOrEqual(0);
    expect(latestPasses, `the latest look came ${latestPasses} passes after its schedule`).toBe(1);
    // 250 experiments made, drafted, sent and looked at through the database: minutes on a loaded 2-core machine.
  }, 240_000);
});

describe('pacing: a wave per look', () => {
  it('drafts the first look’s sample and nothing more until that look is taken, a reply window after the wave went out', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    const t0 = Date.UTC(2026, 10, 2, 9);
    // 10% against 20%: about 380 planned per variant, the first look at the minimum of 100, then every 50.
    const e = await running(env, accountId, 1_400, { baselineRate: 0.1, minimumDetectableEffect: 0.1 }, t0);
    expect(e.plan.minimumPerVariant).toBe(100);
    expect(e.plan.plannedPerVariant).toBeGreaterThan(300);

    await runExperiments(env.deps.db, CONFIG, undefined, t0);
    expect(await drafted(env, e)).toMatchObject({ A: 100, B: 100 });
    // Nothing sent yet: a pass later drafts nothing more.
    await runExperiments(env.deps.db, CONFIG, undefined, t0 + PASS);
    expect((await drafted(env, e)).all.length).toBe(200);

    const sentAt = t0 + 2 * HOUR;
    await sendAll(env, e, sentAt);
    await reply(env, e, { A: 10, B: 10 }, sentAt + HOUR);
    // The pass after the sends schedules the look a reply window after the last of them, and drafts nothing.
    await runExperiments(env.deps.db, CONFIG, undefined, sentAt + PASS);
    const waiting = (await experimentsRepository(env.deps.db).get(accountId, e.id))!;
    expect(Number((await row(env, 'experiments', { id: e.id })).next_look_at)).toBe(sentAt + WINDOW);
    expect(waiting.looks).toEqual([]);
    // Due only then: a pass a minute before drafts nothing, even when its batch would have room.
    await runExperiments(env.deps.db, CONFIG, undefined, sentAt + WINDOW - 60_000);
    expect((await drafted(env, e)).all.length).toBe(200);

    await runExperiments(env.deps.db, CONFIG, undefined, sentAt + WINDOW);
    const looked = (await experimentsRepository(env.deps.db).get(accountId, e.id))!;
    expect(looked.looks).toEqual([100 / e.plan.plannedPerVariant]);
    expect(looked.status).toBe('running');
    // The look taken, the next wave: 5% of the plan rounded up to the look interval, 150 per variant in all.
    expect(await drafted(env, e)).toMatchObject({ A: 150, B: 150 });
    expect((await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' })).length).toBe(300);
  });

  it('finishes a part-drafted wave before its look, so an equal split never trips the sample ratio check', async ({ env }) => {
    const { accountId } = await env.tenant();
    const t0 = Date.UTC(2026, 10, 3, 9);
    const e = await running(env, accountId, 1_400, { baselineRate: 0.1, minimumDetectableEffect: 0.1 }, t0);
    // The first wave drafted, and then A alone drafted 90 further (the next wave begun after a look put off, as far
    // as a draft batch went): A 190, B 100 live, no look yet.
    await runExperiments(env.deps.db, CONFIG, undefined, t0);
    await draftExperimentMail(env.deps.db, e, 90, t0, [0]);
    expect(await drafted(env, e)).toMatchObject({ A: 190, B: 100 });
    const sentAt = t0 + HOUR;
    await sendAll(env, e, sentAt);
    // The pass drafts B up to A before any look; its look then reads 190 and 190 and the check finds nothing.
    await runExperiments(env.deps.db, CONFIG, undefined, sentAt + PASS);
    expect(await drafted(env, e)).toMatchObject({ A: 190, B: 190 });
    const secondSend = sentAt + 2 * PASS;
    await sendAll(env, e, secondSend);
    await reply(env, e, { A: 10, B: 10 }, secondSend + HOUR);
    await runExperiments(env.deps.db, CONFIG, undefined, secondSend + WINDOW);
    const looked = (await experimentsRepository(env.deps.db).get(accountId, e.id))!;
    expect(looked.status).toBe('running');
    expect(looked.looks).toEqual([190 / e.plan.plannedPerVariant]);
    expect(await rows(env, 'review_cards', { account_id: accountId, source_type: 'experiment_mismatch' })).toEqual([]);
  });

  it('stops mailing once a look decides: nothing more is drafted, and the contacts spared are stored and shown on /results', async ({
    env,
  }) => {
    const { accountId, token } = await env.tenant();
    // Four days ago, so the decision falls in /results' window.
    const t0 = Date.now() - 96 * HOUR;
    const e = await running(env, accountId, 1_400, { baselineRate: 0.1, minimumDetectableEffect: 0.1 }, t0);
    await runExperiments(env.deps.db, CONFIG, undefined, t0);
    const sentAt = t0 + HOUR;
    await sendAll(env, e, sentAt);
    // Every B contact replies, one A contact in ten does: the first look decides for B.
    await reply(env, e, { A: 10, B: 1 }, sentAt + HOUR);
    await runExperiments(env.deps.db, CONFIG, undefined, sentAt + WINDOW);
    const ended = (await experimentsRepository(env.deps.db).get(accountId, e.id))!;
    expect(ended).toMatchObject({ status: 'decided', winnerKey: 'B' });
    const planned = 2 * e.plan.plannedPerVariant;
    expect(ended.spared).toBe(planned - 200);

    // Passes after the decision draft nothing for it: the rest of the audience is never mailed.
    for (let k = 1; k <= 3; k++) await runExperiments(env.deps.db, CONFIG, undefined, sentAt + WINDOW + k * PASS);
    expect((await drafted(env, e)).all.length).toBe(200);
    expect((await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' })).length).toBe(200);
    const left = (await experimentsRepository(env.deps.db).assignments(accountId, e.id)).filter((a) => a.card_id === null);
    expect(left.length).toBe(e.audience.length - 200);

    const res = await env.api().get('/api/v1/results').set(auth(token));
    expect(res.status).toBe(200);
    const shown = res.body.results.experiments.find((x: { id: string }) => x.id === e.id);
    expect(shown).toMatchObject({ status: 'decided', spared: planned - 200 });
    expect(shown.variants.map((v: { sent: number }) => v.sent)).toEqual([100, 100]);
  });

  it('shows no contacts spared while an experiment runs', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    const t0 = Date.UTC(2026, 10, 4, 9);
    const e = await running(env, accountId, 1_400, { baselineRate: 0.1, minimumDetectableEffect: 0.1 }, t0);
    await runExperiments(env.deps.db, CONFIG, undefined, t0);
    const res = await env.api().get('/api/v1/results').set(auth(token));
    expect(res.body.results.experiments.find((x: { id: string }) => x.id === e.id)).toMatchObject({ status: 'running', spared: null });
  });
});
