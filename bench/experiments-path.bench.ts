/**
 * Whole experiments through the service's own path, against a stand-in audience with known true reply rates:
 * each experiment is stored and started as the service does (every contact's variant recorded), each contact's
 * mail is drafted by draftExperimentMail (a mail card with its variant) and sent by sendCard (claim, fence, thread,
 * the local transport writing the message, the settle that marks the contact exposed); a contact who replies (one
 * Bernoulli draw at its variant's true rate) sends a real MIME reply to that mail's Reply-To, In-Reply-To its
 * Message-ID, which goes through the inbound path the SMTP listener hands on to (storeInbound, then processInbound:
 * parse, classify, match, apply); lookAtExperiment decides, on the plan's schedule (50 more per variant between
 * looks). After the rule stops, the same audience goes on to the fixed-horizon sample, so the baseline (one test at
 * its own planned sample, whole alpha) reads the same contacts. BENCH_EXPERIMENTS (default 200) experiments per
 * pair of rates; each takes seconds (thousands of sends), so a full run is long: the time per experiment is reported.
 * Run alone with `BENCH_ONLY=experiments-path npm run bench`.
 */
import { createHash } from 'node:crypto';
import { createAccount } from '../src/accounts/accounts.service.js';
import { lookAtExperiment, withRoom } from '../src/agent/experiments/experiments.service.js';
import { createDeps, type Deps } from '../src/deps.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { type Experiment, experimentsRepository } from '../src/experiments/experiments.repository.js';
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
  /** Mails sent (each contact once), and replies through the inbound path. */
  sends: number;
  replies: number;
}

/** The winner of one test spending the whole alpha on these counts (the fixed-horizon baseline), or null. */
function oneLook(plan: ExperimentPlan, counts: VariantCounts[]): number | null {
  const n = Math.min(...counts.map((c) => c.exposures));
  return judge({ plan: { ...plan, plannedPerVariant: n, minimumPerVariant: n }, counts, earlierLooks: [] }).winner;
}

/** A send's fence id and card id for one contact of one experiment (the same on every try, as the drafter's are). */
const sendKey = (experimentId: string, contact: string) =>
  createHash('sha256').update(`${experimentId}\0${contact}`).digest('hex').slice(0, 24);

/**
 * One experiment on a fresh account: stored and started (every contact's variant recorded by the repository), then
 * sent and answered a look's worth at a time. Each send is written as the fence writes it: the contact's assignment
 * names its card and is exposed, and a contact who answers (one draw at its variant's true rate) has its thread
 * recorded by recordThread, the send path's own; the answer, a real MIME reply to that thread's Reply-To and
 * Message-ID, goes through storeInbound and processInbound. The draft and the SMTP send are left out: they cost about
 * 150 ms a contact, 7,000 contacts an experiment, and change nothing the rule reads (the end-to-end and kill -9 tests
 * cover them).
 */
async function runOne(deps: Deps, design: Design, rates: number[], seed: number, k: number): Promise<Run> {
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

  /** Sends to up to `n` more contacts (their recorded variants); each replier's reply goes through the inbound path. */
  const expose = async (n: number) => {
    const next = await repo.undrafted(account.id, id, n);
    if (!next.length) return 0;
    const at = Date.now();
    const sends = next.map((u) => ({ ...u, key: sendKey(id, u.contact), replies: rng() < rates[u.variantIndex]! }));
    await db.raw(
      `UPDATE experiment_assignments a SET card_id = s.card_id, exposed_at = ?
         FROM unnest(?::text[], ?::text[]) AS s(contact, card_id)
        WHERE a.account_id = ? AND a.experiment_id = ? AND a.contact = s.contact AND a.card_id IS NULL`,
      [at, sends.map((s) => s.contact), sends.map((s) => `card_x${s.key}`), account.id, id],
    );
    const answering = sends.filter((s) => s.replies);
    replies += answering.length;
    // Concurrently, as the parse workers take them: the inbound loaders batch their reads.
    await Promise.all(
      answering.map(async (s) => {
        const fencing = { id: `snd_x${s.key}`, accountId: account.id, cardId: `card_x${s.key}`, step: 0, idempotencyKey: s.key, at };
        const thread = await recordThread(db, deps.config, fencing, s.contact);
        const replyToken = (await replyTokenOf(db, deps.config, { ...thread }))!;
        const to: Answered = {
          replyTo: `reply+${replyToken}@${deps.config.inbound.domain}`,
          messageId: thread.messageId,
          subject: variants[s.variantIndex]!.value,
          to: s.contact,
        };
        const raw = Buffer.from(replyMime(to, INTERESTED));
        const inboundId = await storeInbound(deps, { accountId: account.id, via: 'smtp', mailFrom: s.contact, rcptTo: [to.replyTo], raw });
        await processInbound(deps, inboundId);
      }),
    );
    return next.length;
  };

  let sequential: Run['sequential'] | null = null;
  while (sequential === null) {
    const sent = await expose(plan.lookEvery * variants.length);
    const e = (await repo.get(account.id, id)) as Experiment;
    // Replies were applied before the look: the window is over for every exposure (0 ms).
    const state = await lookAtExperiment(db, e, Date.now(), 0);
    if (state !== 'collecting' || sent === 0) {
      const ended = (await repo.get(account.id, id))!;
      const { counts } = await repo.counts(ended, Date.now());
      const winner = ended.winnerKey === null ? null : ended.plan.variants.findIndex((v) => v.key === ended.winnerKey);
      sequential = { winner, perVariant: Math.min(...counts.map((c) => c.exposures)) };
    }
  }
  // The baseline: the same audience on to the fixed horizon, one test there.
  for (;;) {
    const { counts } = await repo.counts(e0, Date.now());
    const least = Math.min(...counts.map((c) => c.exposures));
    if (least >= plan.fixedPerVariant) break;
    if ((await expose(Math.max(variants.length, (plan.fixedPerVariant - least) * variants.length))) === 0) break;
  }
  const { counts } = await repo.counts(e0, Date.now());
  const fixed = { winner: oneLook(plan, counts), perVariant: Math.min(...counts.map((c) => c.exposures)) };
  return { sequential, fixed, ms: performance.now() - started, sends: counts.reduce((n, c) => n + c.exposures, 0), replies };
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
  await ensureDatabase(config.databaseUrl);
  const deps = createDeps(config, createLogger('silent'));
  await deps.ready();
  await migrate(deps.db);
  const design: Design = {
    baseline: Number(process.env.BENCH_EXPERIMENT_BASELINE ?? 0.04),
    effect: Number(process.env.BENCH_EXPERIMENT_EFFECT ?? 0.02),
  };
  const [low, high, mid] = [design.baseline, design.baseline + design.effect, design.baseline + design.effect / 2];
  const scenarios = [
    { name: `${pct(low)} vs ${pct(high)}`, rates: [low, high], best: 1 },
    { name: `${pct(mid)} vs ${pct(mid)}`, rates: [mid, mid], best: null },
  ];
  const isDefault = design.baseline === 0.04 && design.effect === 0.02;
  const lines = [
    '| true rates | monitoring | experiments | picks the better | declares a winner | average sample per variant | of its planned sample |',
    '|---|---|---:|---:|---:|---:|---:|',
  ];
  const verdicts: string[] = [];
  // Fewer than 200 experiments, or a design other than the default, cannot say whether the targets are met.
  const judged = (met: boolean) => (count >= 200 && isDefault ? `: ${met ? 'met' : 'missed'}` : ', not judged on this run');
  const times: number[] = [];
  const allRuns: Run[] = [];
  let plan: ExperimentPlan | null = null;
  try {
    for (const s of scenarios) {
      const runs: Run[] = [];
      // A few experiments at once (BENCH_EXPERIMENT_CONCURRENCY), each with its own seeded draws, so the run is repeatable.
      const offset = allRuns.length;
      await pool(
        Array.from({ length: count }, (_, k) => k),
        concurrency,
        async (k) => {
          runs[k] = await runOne(deps, design, s.rates, SEED + offset + k, offset + k);
          if ((k + 1) % 10 === 0) process.stderr.write(`experiments-path ${s.name}: ${k + 1} of ${count}\n`);
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
        lines.push(
          `| ${s.name} | ${label} | ${fmt(m.runs)} | ${s.best === null ? '—' : pct(m.correct)} | ${pct(m.anyWinner)} | ` +
            `${fmt(m.averagePerVariant)} | ${pct(m.averagePerVariant / planned)} |`,
        );
        if (label === 'sequential rule') {
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
  const small = count < 200;
  // One paragraph, the table, one paragraph: docs/performance.md stays within its 600 lines.
  const body = [
    [
      "Whole experiments through the service path (stored and started by the repository, every contact's variant recorded;",
      'each send written as the fence writes it, the thread of a contact who answers by recordThread; each answer a real MIME',
      'reply through storeInbound and processInbound; lookAtExperiment on the plan schedule), against a stand-in audience',
      `with known true reply rates (seeds from ${SEED}); the design: ${pct(low)} against ${pct(high)}` +
        `${isDefault ? ' (the default)' : ' (not the default: a quick check of the path, BENCH_EXPERIMENT_BASELINE / _EFFECT)'}, ` +
        `${plan ? `${fmt(plan.plannedPerVariant)} planned per variant (first look at ${fmt(plan.minimumPerVariant)}, then every ` : ''}` +
        `${plan ? `${plan.lookEvery}), ${fmt(plan.fixedPerVariant)} for one look at the end` : ''}.`,
      'The fixed-horizon baseline reads the same contacts, continued to its own planned sample.',
    ].join(' '),
    '',
    ...lines,
    '',
    [
      `The sequential rule ${verdicts.join('; ')}.`,
      `${fmt(sends)} contacts sent to and ${fmt(replies)} replies through the inbound path in all; ${fmt(perExperiment / 1000, 1)} s ` +
        `per experiment (both monitorings, the audience sent to the fixed horizon), ${concurrency} at a time.`,
      ...(small
        ? [
            `Only ${fmt(count)} experiments per pair of rates were run here (BENCH_EXPERIMENTS=${count}), so the shares above say little;`,
            'the in-memory simulation ("Experiments: the stopping rule simulated") gives the same rule over 200 and 2,000 runs.',
          ]
        : []),
    ].join(' '),
  ].join('\n');
  return { title: 'Experiments: whole experiments through the service path', body };
}
