/**
 * Whole experiments through the service's own path, against a stand-in audience with known true reply rates, paced
 * as the maintenance pass paces them (src/experiments/pacing.ts): each experiment is stored and started as the
 * service does (every contact's variant recorded); paceExperiment, the pass's own step, with the default settings
 * and a real reply window compressed in time (BENCH_EXPERIMENT_REPLY_WINDOW_MS, default 1,000 ms for three days),
 * drafts each wave's mail cards (the next look's sample, by draftExperimentMail) and takes the wave's look once its
 * mail is a window old; each card is sent as the fence writes a send (its contact exposed); a contact who replies
 * (one Bernoulli draw at its variant's true rate) sends a real MIME reply to that mail's Reply-To, In-Reply-To its
 * Message-ID, through the inbound path the SMTP listener hands on to (storeInbound, then processInbound: parse,
 * classify, match, apply), inside the window. Reported: contacts mailed against the fixed-horizon plan's, and the
 * waves (each a reply window of calendar time). After the rule stops, the same audience goes on to the fixed-horizon
 * sample (those answers drawn in memory), so the baseline (one test at its own planned sample, whole alpha) reads
 * the same contacts. BENCH_EXPERIMENTS (default 200) experiments per pair of rates; each takes seconds (thousands of
 * mail cards and a window per wave), so a full run is long: the time per experiment is reported.
 * Run alone with `BENCH_ONLY=experiments-path npm run bench`.
 */
import { createHash } from 'node:crypto';
import { createAccount } from '../src/accounts/accounts.service.js';
import { withRoom } from '../src/experiments/experiments.service.js';
import { type PassConfig, paceExperiment } from '../src/experiments/pacing.js';
import { createDeps, type Deps } from '../src/deps.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { experimentsRepository } from '../src/experiments/experiments.repository.js';
import { passQueue } from '../src/experiments/pass-queue.js';
import { type ExperimentPlan, planExperiment, type VariantCounts } from '../src/statistics/plan.js';
import { seededRandom } from '../src/statistics/simulate.js';
import { judge } from '../src/statistics/stopping.js';
import { newId } from '../src/ids.js';
import { storeInbound } from '../src/inbound/intake.service.js';
import { processInbound } from '../src/inbound/process.service.js';
import { createLogger } from '../src/logger.js';
import { recordThread, replyTokenOf } from '../src/mail/outbound.js';
import { configWith } from '../test/helpers/config.js';
import { type Answered, INTERESTED, replyMime } from '../test/helpers/mail-reply.js';
import { dropPrefix, fmt, NO_RATE_LIMITS, pct, pool } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchexperiments}';
const SEED = 20261127;
const DRAFT = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const CHALLENGER = 'Quick question about onboarding';

/** The rates the plan is made for: the defaults (4% against 6%), or BENCH_EXPERIMENT_BASELINE / _EFFECT for a quick check. */
interface Design {
  baseline: number;
  effect: number;
}

interface Run {
  /** The sequential rule's winner (variant index) or null, and the contacts per variant it used. */
  sequential: { winner: number | null; perVariant: number };
  /** The fixed-horizon test at its own planned sample on the same audience. */
  fixed: { winner: number | null; perVariant: number };
  ms: number;
  /** Contacts the paced experiment mailed (its waves), the waves it took, and the spared count it stored. */
  mailed: number;
  waves: number;
  spared: number | null;
  /** Mails sent in all (the waves, then the baseline's continuation), and replies through the inbound path. */
  sends: number;
  replies: number;
}

/** The winner of one test spending the whole alpha on these counts (the fixed-horizon baseline), or null. */
function oneLook(plan: ExperimentPlan, counts: VariantCounts[]): number | null {
  const n = Math.min(...counts.map((c) => c.exposures));
  return judge({ plan: { ...plan, plannedPerVariant: n, minimumPerVariant: n }, counts, earlierLooks: [] }).winner;
}

const fenceKey = (cardId: string) => createHash('sha256').update(cardId).digest('hex').slice(0, 24);
/** A share of the fixed-horizon plan's contacts in words: "36.2% fewer", "4.3% more", "as many". */
const fewer = (share: number) => (share < 1 ? `${pct(1 - share)} fewer` : share > 1 ? `${pct(share - 1)} more` : 'as many');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One experiment on a fresh account: stored and started (every contact's variant recorded by the repository), then run
 * by the maintenance pass's own step, paceExperiment, with the default settings and a real reply window compressed in
 * time (BENCH_EXPERIMENT_REPLY_WINDOW_MS): each call drafts the mail cards of the current wave (the next look's sample,
 * through the drafter: a real mail card per contact) and, once a wave's mail is a window old, takes its look and
 * drafts the next. Each drafted card is sent as the fence writes it (the contact's assignment exposed); a contact who
 * answers (one draw at its variant's true rate) has its thread recorded by recordThread, the send path's own, and
 * its answer, a real MIME reply to that thread's Reply-To and Message-ID, goes through storeInbound and processInbound
 * at a random moment inside the first half of the window. The SMTP send is left out (the end-to-end and kill -9 tests
 * cover it). After the experiment ends, the same audience goes on to the fixed-horizon sample, so the baseline (one test
 * at its own planned sample, whole alpha) reads the same contacts.
 */
async function runOne(deps: Deps, config: PassConfig, design: Design, rates: number[], seed: number, k: number): Promise<Run> {
  const started = performance.now();
  const rng = seededRandom(seed);
  const { db } = deps;
  const account = await createAccount(db, `Experiment bench ${k}`);
  const id = newId('exp');
  const variants = [DRAFT.subject, CHALLENGER].map((value, i) => ({ key: 'AB'[i]!, description: `"${value}"`, value }));
  const plan = planExperiment({
    id,
    hypothesis: 'simulated',
    subject: 'the mail subject',
    variants,
    metric: 'reply_rate',
    audience: 'a stand-in audience with known rates',
    baselineRate: design.baseline,
    minimumDetectableEffect: design.effect,
  });
  // Room for the hash's uneven split, as proposals ask for, up to the longer of the two horizons.
  const size = withRoom(Math.max(plan.plannedPerVariant, plan.fixedPerVariant), variants.length);
  const audience = Array.from({ length: size }, (_, i) => ({ leadId: null, email: `c${i}@x${k}-${i % 97}.bench.test` }));
  const repo = experimentsRepository(db);
  await repo.insert({
    accountId: account.id,
    id,
    cardId: null,
    thing: 'mail_subject',
    topic: 'onboarding',
    plan: { ...plan, variants },
    draft: DRAFT,
    audience,
    createdAt: Date.now(),
  });
  await repo.start(account.id, id, Date.now());
  const e0 = (await repo.get(account.id, id))!;
  let replies = 0;
  const answering: Promise<void>[] = [];

  /** The contact of `cardId` answers: its thread as the send path records it, its reply through the inbound path. */
  const answer = async (cardId: string, contact: string, variantIndex: number, at: number) => {
    const key = fenceKey(cardId);
    const fencing = { id: `snd_x${key}`, accountId: account.id, cardId, step: 0, idempotencyKey: key, at };
    const thread = await recordThread(db, deps.config, fencing, contact);
    const replyToken = (await replyTokenOf(db, deps.config, { ...thread }))!;
    const to: Answered = {
      replyTo: `reply+${replyToken}@${deps.config.inbound.domain}`,
      messageId: thread.messageId,
      subject: variants[variantIndex]!.value,
      to: contact,
    };
    const raw = Buffer.from(replyMime(to, INTERESTED));
    const inboundId = await storeInbound(deps, { accountId: account.id, via: 'smtp', mailFrom: contact, rcptTo: [to.replyTo], raw });
    await processInbound(deps, inboundId);
  };

  /** Sends every drafted, unsent mail of the experiment now (as the fence writes a send); repliers answer within the window. */
  const sendDrafted = async () => {
    const { rows } = (await db.raw(
      `UPDATE experiment_assignments SET exposed_at = ? WHERE account_id = ? AND experiment_id = ?
          AND card_id IS NOT NULL AND exposed_at IS NULL AND skipped IS NULL
        RETURNING contact, card_id, variant_index`,
      [Date.now(), account.id, id],
    )) as { rows: { contact: string; card_id: string; variant_index: number }[] };
    // In contact order, so the draws follow the audience and a run repeats.
    rows.sort((a, b) => (a.contact < b.contact ? -1 : 1));
    for (const r of rows) {
      if (rng() >= rates[r.variant_index]!) continue;
      replies++;
      const delay = rng() * (config.replyWindowMs / 2);
      answering.push(sleep(delay).then(() => answer(r.card_id, r.contact, r.variant_index, Date.now())));
    }
    return rows.length;
  };

  for (let pass = 0; pass < 10_000; pass++) {
    const e = (await repo.get(account.id, id))!;
    if (e.status !== 'running') break;
    const paced = await paceExperiment(db, e, Date.now(), config);
    if (paced.state !== 'collecting') break;
    await sendDrafted();
    // A wave larger than the draft batch takes several passes, back to back; then the pass comes back when the wave's
    // last mail is a window old (replies land before it: they are awaited, so none is lost to a slow machine).
    if (paced.drafted > 0) continue;
    const after = await passQueue(db).wave(e, Date.now() - config.replyWindowMs);
    const due = after.lastSentAt === null ? Date.now() : after.lastSentAt + config.replyWindowMs;
    await Promise.all(answering.splice(0));
    await sleep(Math.max(1, due - Date.now() + 1));
  }
  await Promise.all(answering.splice(0));
  const ended = (await repo.get(account.id, id))!;
  const atEnd = await repo.counts(ended, Date.now());
  const winner = ended.winnerKey === null ? null : ended.plan.variants.findIndex((v) => v.key === ended.winnerKey);
  const sequential = { winner, perVariant: Math.min(...atEnd.counts.map((c) => c.exposures)) };
  const mailed = atEnd.sent.reduce((n, x) => n + x, 0);

  /** The baseline's continuation: `n` more contacts exposed at once, their answers drawn the same way (in memory). */
  const extraOutcomes = [0, 0];
  const expose = async (n: number) => {
    const next = await repo.undrafted(account.id, id, n);
    if (!next.length) return 0;
    await db.raw(
      `UPDATE experiment_assignments a SET card_id = 'card_b' || md5(a.contact), exposed_at = ?
        WHERE a.account_id = ? AND a.experiment_id = ? AND a.contact = ANY(?::text[]) AND a.card_id IS NULL`,
      [Date.now(), account.id, id, next.map((u) => u.contact)],
    );
    for (const u of next) if (rng() < rates[u.variantIndex]!) extraOutcomes[u.variantIndex]! += 1;
    return next.length;
  };
  for (;;) {
    const { counts } = await repo.counts(e0, Date.now());
    const least = Math.min(...counts.map((c) => c.exposures));
    if (least >= plan.fixedPerVariant) break;
    if ((await expose(Math.max(variants.length, (plan.fixedPerVariant - least) * variants.length))) === 0) break;
  }
  const { counts } = await repo.counts(e0, Date.now());
  const withExtra = counts.map((c, i) => ({ exposures: c.exposures, outcomes: c.outcomes + extraOutcomes[i]! }));
  const fixed = { winner: oneLook(plan, withExtra), perVariant: Math.min(...counts.map((c) => c.exposures)) };
  return {
    sequential,
    fixed,
    ms: performance.now() - started,
    mailed,
    // Every wave ends in a look (the last one's decides).
    waves: ended.looks.length,
    spared: ended.spared,
    sends: counts.reduce((n, c) => n + c.exposures, 0),
    replies,
  };
}

interface Summary {
  runs: number;
  correct: number;
  anyWinner: number;
  averagePerVariant: number;
}

function summarise(results: { winner: number | null; perVariant: number }[], best: number | null): Summary {
  const runs = results.length;
  return {
    runs,
    correct: results.filter((r) => (best === null ? r.winner === null : r.winner === best)).length / runs,
    anyWinner: results.filter((r) => r.winner !== null).length / runs,
    averagePerVariant: results.reduce((s, r) => s + r.perVariant, 0) / runs,
  };
}

export async function experimentsPath(ctx: BenchContext): Promise<Section> {
  const count = Number(process.env.BENCH_EXPERIMENTS ?? 200);
  const concurrency = Number(process.env.BENCH_EXPERIMENT_CONCURRENCY ?? 4);
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'silent',
    ...NO_RATE_LIMITS,
  });
  // The settings' defaults, with the reply window compressed in time (three days by default: a second here).
  const windowMs = Number(process.env.BENCH_EXPERIMENT_REPLY_WINDOW_MS ?? 1_000);
  const pass: PassConfig = { ...config.experiments, replyWindowMs: windowMs };
  await ensureDatabase(config.databaseUrl);
  const deps = createDeps(config, createLogger('silent'));
  await deps.ready();
  await migrate(deps.db);
  // The pool's connections opened first, each with a few tries: on a loaded machine a new connection can take longer
  // than the pool's connect timeout, and the runs below keep these open (their waits are far under its idle time).
  for (let tries = 0; ; tries++) {
    try {
      await Promise.all(Array.from({ length: config.databasePoolMax }, () => deps.db.raw('SELECT pg_sleep(0.2)')));
      break;
    } catch (err) {
      if (tries >= 5) throw err;
    }
  }
  const design: Design = {
    baseline: Number(process.env.BENCH_EXPERIMENT_BASELINE ?? 0.04),
    effect: Number(process.env.BENCH_EXPERIMENT_EFFECT ?? 0.02),
  };
  const [low, high, mid] = [design.baseline, design.baseline + design.effect, design.baseline + design.effect / 2];
  // Equal rates run to the whole plan (twice the mail of a real difference): BENCH_EXPERIMENTS_EQUAL may run fewer.
  const equalCount = Number(process.env.BENCH_EXPERIMENTS_EQUAL ?? count);
  const scenarios = [
    { name: `${pct(low)} vs ${pct(high)}`, rates: [low, high], best: 1, count },
    { name: `${pct(mid)} vs ${pct(mid)}`, rates: [mid, mid], best: null, count: equalCount },
  ];
  const isDefault = design.baseline === 0.04 && design.effect === 0.02;
  const lines = [
    '| true rates | monitoring | experiments | picks the better | declares a winner | average sample per variant | ' +
      'of its planned sample | contacts mailed (average) | against the fixed-horizon plan | waves (reply windows) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const mailedFigures: string[] = [];
  const verdicts: string[] = [];
  // Fewer than 200 experiments, or a design other than the default, cannot say whether the targets are met.
  const judged = (met: boolean) =>
    Math.min(count, equalCount) >= 200 && isDefault ? `: ${met ? 'met' : 'missed'}` : ', not judged on this run';
  const times: number[] = [];
  const allRuns: Run[] = [];
  let plan: ExperimentPlan | null = null;
  try {
    for (const s of scenarios) {
      const runs: Run[] = [];
      // A few experiments at once (BENCH_EXPERIMENT_CONCURRENCY), each with its own seeded draws, so the run is repeatable.
      const offset = allRuns.length;
      await pool(
        Array.from({ length: s.count }, (_, k) => k),
        concurrency,
        async (k) => {
          runs[k] = await runOne(deps, pass, design, s.rates, SEED + offset + k, offset + k);
          if ((k + 1) % 10 === 0) process.stderr.write(`experiments-path ${s.name}: ${k + 1} of ${s.count}\n`);
        },
      );
      times.push(...runs.map((r) => r.ms));
      allRuns.push(...runs);
      plan ??= planExperiment({
        id: 'x',
        hypothesis: 'h',
        subject: 's',
        variants: [
          { key: 'A', description: 'A' },
          { key: 'B', description: 'B' },
        ],
        metric: 'reply_rate',
        audience: 'a',
        baselineRate: design.baseline,
        minimumDetectableEffect: design.effect,
      });
      for (const [label, pick, planned] of [
        ['sequential rule', (r: Run) => r.sequential, plan.plannedPerVariant],
        ['fixed horizon (one look)', (r: Run) => r.fixed, plan.fixedPerVariant],
      ] as const) {
        const m = summarise(runs.map(pick), s.best);
        // The fixed-horizon plan mails its whole sample in every variant; the paced rule what its waves mailed.
        const fixedPlan = plan.fixedPerVariant * s.rates.length;
        const mailed = label === 'sequential rule' ? runs.reduce((n, r) => n + r.mailed, 0) / runs.length : fixedPlan;
        const waves = label === 'sequential rule' ? fmt(runs.reduce((n, r) => n + r.waves, 0) / runs.length, 1) : '—';
        lines.push(
          `| ${s.name} | ${label} | ${fmt(m.runs)} | ${s.best === null ? '—' : pct(m.correct)} | ${pct(m.anyWinner)} | ` +
            `${fmt(m.averagePerVariant)} | ${pct(m.averagePerVariant / planned)} | ` +
            `${fmt(mailed)} | ${fewer(mailed / fixedPlan)} | ${waves} |`,
        );
        if (label === 'sequential rule') {
          const spared = runs.every((r) => r.spared === Math.max(0, plan!.plannedPerVariant * s.rates.length - r.mailed));
          mailedFigures.push(
            `with ${s.name} it mailed ${fmt(mailed)} contacts on average against the fixed-horizon plan's ${fmt(fixedPlan)} ` +
              `(${fewer(mailed / fixedPlan)}; each experiment's stored spared count ` +
              `${spared ? 'matched' : 'did NOT match'} its planned maximum less what it mailed)`,
          );
          verdicts.push(
            s.best === null
              ? `declares a winner with equal rates in ${pct(m.anyWinner)} (target ≤ 5%${judged(m.anyWinner <= 0.05)})`
              : `picks the better variant with ${s.name} in ${pct(m.correct)} (target ≥ 90%${judged(m.correct >= 0.9)})`,
          );
        }
      }
    }
  } finally {
    await deps.close();
    await dropPrefix(config.redisUrl, PREFIX);
  }
  const perExperiment = times.reduce((s, t) => s + t, 0) / Math.max(1, times.length);
  const sends = allRuns.reduce((n, r) => n + r.sends, 0);
  const replies = allRuns.reduce((n, r) => n + r.replies, 0);
  const small = Math.min(count, equalCount) < 200;
  // One paragraph, the table, one paragraph: docs/performance.md stays within its 600 lines.
  const body = [
    [
      "Whole experiments through the service path (stored and started by the repository, every contact's variant recorded;",
      "paced in waves by the maintenance pass's own step, paceExperiment, with the default settings and the reply window",
      `compressed to ${fmt(windowMs)} ms: each wave's mail cards drafted by the drafter, its look taken once its mail is a window old;`,
      'each send written as the fence writes it, the thread of a contact who answers by recordThread; each answer a real MIME',
      'reply through storeInbound and processInbound inside the window), against a stand-in audience',
      `with known true reply rates (seeds from ${SEED}); the design: ${pct(low)} against ${pct(high)}` +
        `${isDefault ? ' (the default)' : ' (not the default: a quick check of the path, BENCH_EXPERIMENT_BASELINE / _EFFECT)'}, ` +
        `${plan ? `${fmt(plan.plannedPerVariant)} planned per variant (first look at ${fmt(plan.minimumPerVariant)}, then every ` : ''}` +
        `${plan ? `${plan.lookEvery}), ${fmt(plan.fixedPerVariant)} for one look at the end` : ''}.`,
      'The fixed-horizon baseline reads the same contacts, continued to its own planned sample (those answers drawn in memory).',
      'A wave is a reply window of calendar time: three days each at the default window.',
    ].join(' '),
    '',
    ...lines,
    '',
    [
      `The sequential rule ${verdicts.join('; ')}. Paced, ${mailedFigures.join('; ')}.`,
      `${fmt(sends)} contacts sent to and ${fmt(replies)} replies through the inbound path in all; ${fmt(perExperiment / 1000, 1)} s ` +
        `per experiment (the waves with their windows, then the audience continued to the fixed horizon), ${concurrency} at a time.`,
      ...(small
        ? [
            `Only ${fmt(count)} and ${fmt(equalCount)} experiments per pair of rates were run here (BENCH_EXPERIMENTS, ` +
              `BENCH_EXPERIMENTS_EQUAL), so the shares above say little;`,
            'the in-memory simulation ("Experiments: the stopping rule simulated") gives the same rule over 200 and 2,000 runs.',
          ]
        : []),
    ].join(' '),
  ].join('\n');
  return { title: 'Experiments: whole experiments through the service path', body };
}
