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
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createAccount } from '../src/accounts/accounts.service.js';
import { draftExperimentMail, lookAtExperiment } from '../src/agent/experiments.service.js';
import { createDeps, type Deps } from '../src/deps.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { type Experiment, experimentsRepository } from '../src/experiments/experiments.repository.js';
import { type ExperimentPlan, planExperiment, type VariantCounts } from '../src/experiments/plan.js';
import { seededRandom } from '../src/experiments/simulate.js';
import { judge } from '../src/experiments/stopping.js';
import { newId } from '../src/ids.js';
import { storeInbound } from '../src/inbound/intake.service.js';
import { processInbound } from '../src/inbound/process.service.js';
import { createLogger } from '../src/logger.js';
import { sendCard } from '../src/shipping/ship-card.service.js';
import { configWith } from '../test/helpers/config.js';
import { type Answered, INTERESTED, replyMime } from '../test/helpers/mail-reply.js';
import { dropPrefix, fmt, NO_RATE_LIMITS, pct } from './lib.js';
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
  /** Mails sent (each contact once). */
  sends: number;
}

/** The winner of one test spending the whole alpha on these counts (the fixed-horizon baseline), or null. */
function oneLook(plan: ExperimentPlan, counts: VariantCounts[]): number | null {
  const n = Math.min(...counts.map((c) => c.exposures));
  return judge({ plan: { ...plan, plannedPerVariant: n, minimumPerVariant: n }, counts, earlierLooks: [] }).winner;
}

/** One experiment on a fresh account: stored and started, then drafted, sent and answered a look's worth at a time. */
async function runOne(deps: Deps, design: Design, rates: number[], rng: () => number, k: number): Promise<Run> {
  const started = performance.now();
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
  const size = plan.plannedPerVariant * variants.length;
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

  /** Drafts and sends up to `n` more contacts; each replier's reply goes through the inbound path. */
  const expose = async (n: number) => {
    await draftExperimentMail(db, e0, n);
    const fresh = await db('experiment_assignments')
      .where({ account_id: account.id, experiment_id: id })
      .whereNotNull('card_id')
      .whereNull('exposed_at')
      .select('contact', 'card_id', 'variant_index');
    for (const a of fresh) {
      await sendCard(deps, null, account.id, a.card_id, { decidedBy: 'person' });
      if (rng() >= rates[a.variant_index]!) continue;
      const t = await db('mail_threads').where({ account_id: account.id, card_id: a.card_id }).first('reply_token', 'message_id');
      const to: Answered = {
        replyTo: `reply+${t.reply_token}@${deps.config.inbound.domain}`,
        messageId: t.message_id,
        subject: a.variant_index === 0 ? DRAFT.subject : CHALLENGER,
        to: a.contact,
      };
      const raw = Buffer.from(replyMime(to, INTERESTED));
      const inboundId = await storeInbound(deps, { accountId: account.id, via: 'smtp', mailFrom: a.contact, rcptTo: [to.replyTo], raw });
      await processInbound(deps, inboundId);
    }
    return fresh.length;
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
  return { sequential, fixed, ms: performance.now() - started, sends: counts.reduce((n, c) => n + c.exposures, 0) };
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
  const mailDir = await mkdtemp(path.join(os.tmpdir(), 'bench-experiments-'));
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'silent',
    MAIL_TRANSPORT: 'local',
    MAIL_LOCAL_DIR: mailDir,
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
    const rng = seededRandom(SEED);
    for (const s of scenarios) {
      const runs: Run[] = [];
      for (let k = 0; k < count; k++) runs.push(await runOne(deps, design, s.rates, rng, times.length + k));
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
    await rm(mailDir, { recursive: true, force: true });
  }
  const perExperiment = times.reduce((s, t) => s + t, 0) / Math.max(1, times.length);
  const sends = allRuns.reduce((n, r) => n + r.sends, 0);
  const small = count < 200;
  // One paragraph, the table, one paragraph: docs/performance.md stays within its 600 lines.
  const body = [
    [
      'Whole experiments through the service path (store, start, draftExperimentMail, sendCard to the local transport,',
      'real MIME replies through storeInbound and processInbound, lookAtExperiment on the plan schedule), against a',
      `stand-in audience with known true reply rates (seed ${SEED}); the design: ${pct(low)} against ${pct(high)}` +
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
      `Time per experiment (both monitorings, the audience sent to the fixed horizon): ${fmt(perExperiment / 1000, 1)} s on this ` +
        `machine, ${fmt(times.reduce((a, t) => a + t, 0) / Math.max(1, sends), 1)} ms per contact sent (draft, send, settle, and ` +
        'the reply through the inbound path when it answers).',
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
