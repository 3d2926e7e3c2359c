/**
 * An experiment as it reads now, for `/results` (`experiments`) and the agent's `read_results` tool: per variant
 * its exposures, outcomes, rate with a 95% interval and chance of being best, and the decision state. A running
 * experiment is judged on its counts so far without recording a look (only the maintenance pass looks, on its
 * schedule: experiments.service.ts), so it reads `collecting` until that look ends it; an ended one shows the
 * decision it ended on. Why the exposures are the matured ones: docs/decisions/experiments.md, "Reading an experiment".
 */
import type { Queryable } from '../db.js';
import type { ReportedExperiment } from '../results/reported-experiments.js';
import { type Experiment, type ExperimentCounts, experimentsRepository } from './experiments.repository.js';
import { METRICS } from '../statistics/plan.js';
import { type Decision, decide } from '../statistics/stopping.js';
import type { Difference } from '../statistics/intervals.js';
import { citation, storedDifferences } from '../statistics/wording.js';

/** The scoreboard's shape (results defines what it reports), with this area's own narrower types. */
export interface ExperimentReading extends Omit<ReportedExperiment, 'status' | 'thing' | 'metric'> {
  status: Experiment['status'];
  thing: Experiment['thing'];
  metric: Experiment['plan']['metric'];
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/** A difference as /results shows it, rounded; null for none (the control, or nothing exposed). */
function differenceOf(d: Difference | undefined): ExperimentReading['variants'][number]['difference'] {
  if (!d) return null;
  const pair = (x: [number, number]): [number, number] => [round(x[0]), round(x[1])];
  const finite = (x: [number, number]): [number, number] => [Math.max(-1e6, x[0]), Math.min(1e6, x[1])];
  return {
    estimate: round(d.absolute.estimate),
    interval: pair(finite(d.absolute.interval)),
    relative: d.relative ? { estimate: round(d.relative.estimate), interval: pair(finite(d.relative.interval)) } : null,
    level: round(d.level),
  };
}

/**
 * A running experiment's figures on `counts`, as `collecting`: only a look the maintenance pass records can decide
 * (and it ends the experiment when it does), so a reading between looks never shows a winner the rule did not name.
 */
function runningDecision(e: Experiment, counts: ExperimentCounts['counts']): Decision {
  const { variants, fraction, plannedReached, look } = decide({ plan: e.plan, counts, earlierLooks: e.looks, ended: false });
  return { variants, fraction, plannedReached, look, state: 'collecting' };
}

/** `sent`: each variant's mail sent so far (ExperimentCounts.sent); none when not given. */
export function readingOf(e: Experiment, decision: Decision | null, sent: readonly number[] = []): ExperimentReading {
  const state = e.status === 'proposed' || e.status === 'dismissed' ? e.status : (decision?.state ?? 'collecting');
  // Only an ended experiment shows a chance of being best: before the end it would invite the early call.
  const ended = e.status === 'decided' || e.status === 'no_winner';
  const differences = decision?.variants.some((v) => v.exposures > 0) ? storedDifferences(e.plan, decision) : [];
  return {
    id: e.id,
    status: e.status,
    thing: e.thing,
    topic: e.topic,
    hypothesis: e.plan.hypothesis,
    metric: e.plan.metric,
    plannedPerVariant: e.plan.plannedPerVariant,
    minimumPerVariant: e.plan.minimumPerVariant,
    variants: e.plan.variants.map((v, i) => {
      const f = decision?.variants[i];
      const exposures = f?.exposures ?? 0;
      return {
        key: v.key,
        description: v.description,
        value: v.value,
        exposures,
        outcomes: f?.outcomes ?? 0,
        rate: exposures > 0 ? round(f!.outcomes / exposures) : null,
        interval: exposures > 0 ? [round(f!.interval[0]), round(f!.interval[1])] : null,
        probabilityBest: ended && f ? round(f.probabilityBest) : null,
        difference: differenceOf(differences.find((d) => d.key === v.key && i > 0)),
        sent: sent[i] ?? 0,
      };
    }),
    decision: {
      state,
      winner: decision?.state === 'winner' ? decision.winner.key : null,
      citation: decision && e.status !== 'proposed' ? citation(e.plan, decision) : null,
      plannedReached: decision?.plannedReached ?? false,
    },
    startedAt: e.startedAt,
    decidedAt: e.decidedAt,
    adoptedAt: e.adoptedAt,
    spared: e.spared,
  };
}

/**
 * The account's experiments (running and proposed, and those that ended since `since`; newest first, at most 20),
 * as they read now: two statements whatever their number (the list, then every one's counts), one when there is none.
 */
export async function readExperiments(q: Queryable, accountId: string, since: number, maturedBy: number): Promise<ExperimentReading[]> {
  const repo = experimentsRepository(q);
  const list = await repo.listFor(accountId, since);
  const counted = list.filter((e) => e.status !== 'proposed' && e.status !== 'dismissed');
  const counts = await repo.countsOf(accountId, counted, maturedBy);
  return list.map((e) => {
    const c = counts.get(e.id);
    if (e.status === 'running' || e.status === 'paused') return readingOf(e, runningDecision(e, c!.counts), c!.sent);
    return readingOf(e, e.decision, c?.sent);
  });
}

/** One line of facts per experiment for the agent (no contact, reply text or account note in it). */
export function experimentFact(r: ExperimentReading): string {
  const what = `${r.thing.replace('_', ' ')} test for "${r.topic}" (${METRICS[r.metric].rate})`;
  if (r.status === 'proposed') return `${what}: proposed, waiting for approval`;
  if (r.status === 'dismissed') return `${what}: dismissed`;
  if (r.status === 'paused')
    return `${what}: paused (the variants' counts are not the planned split; a person resumes or ends it); ${r.decision.citation ?? ''}`;
  const state = r.decision.state === 'winner' ? `winner ${r.decision.winner}` : r.decision.state.replace('_', ' ');
  return `${what}: ${r.status}, ${state}; ${r.decision.citation ?? 'no figures yet'}`;
}
