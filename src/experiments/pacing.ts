/**
 * The maintenance pass over running experiments (docs/decisions/experiments-pacing.md, "Pacing: a wave per look" and "Fair
 * across accounts"). A mail experiment is mailed in waves: a wave is what the next look reads (waves.ts
 * nextLookSample), drafted per variant; its look is taken once every mail of it is a reply window old; only then is
 * the next wave drafted. So a look that decides leaves the rest of the audience unmailed, and the experiment records
 * how many contacts of its plan that spared. The pass takes the experiments due (their wave's look, or mail still to
 * draft or send) in bounded batches, round-robin across accounts, so one account's many experiments never hold back
 * another's look by more than the batches they fill.
 */
import type { Db } from '../db.js';
import type { Logger } from '../logger.js';
import type { Decision } from '../statistics/stopping.js';
import { nextLookSample, waveNeeds } from '../statistics/waves.js';
import { type Experiment, experimentsRepository, type Wave } from './experiments.repository.js';
import { draftExperimentMail, lookAtExperiment } from './experiments.service.js';
import { passQueue } from './pass-queue.js';
import { judgedAfterMs, kindOf } from './variants/registry.js';

export interface PassConfig {
  replyWindowMs: number;
  draftBatch: number;
  passLimit: number;
  passBatches: number;
  waveShare: number;
}

export interface Paced {
  drafted: number;
  /** What the look made of it (`paused`: the sample ratio check stopped it for a person). */
  state: Decision['state'] | 'paused';
  /** When the experiment is due again: now (mail still to draft or send), or when its wave's last mail matures. */
  nextLookAt: number;
}

/** Experiments without contacts (an ad test, a post's readers) are not paced: their one card is filed, and each pass looks. */
const mailed = (e: Experiment) => kindOf(e.thing).reaches === 'contacts';

/** Drafts what the wave for a look at `target` per variant still lacks (at most `budget` cards); the count drafted. */
async function draftWave(db: Db, e: Experiment, target: number, live: number[], budget: number, now: number): Promise<number> {
  let drafted = 0;
  const needs = waveNeeds(target, live, budget);
  for (const [i, need] of needs.entries()) if (need > 0) drafted += await draftExperimentMail(db, e, need, now, [i]);
  return drafted;
}

/**
 * One experiment's turn in the pass at `now`: its current wave drafted (up to the draft batch), its look taken once
 * the wave has all matured, and then the next wave drafted. Nothing of a wave is drafted before the look it follows.
 */
export async function paceExperiment(db: Db, e: Experiment, now: number, config: PassConfig): Promise<Paced> {
  if (!mailed(e)) {
    const drafted = await draftExperimentMail(db, e, config.draftBatch, now);
    return { drafted, state: await lookAtExperiment(db, e, now, config.replyWindowMs), nextLookAt: now };
  }
  const repo = experimentsRepository(db);
  const maturedBy = now - config.replyWindowMs;
  let wave = await passQueue(db).wave(e, maturedBy);
  // A wave a pass began and left part-drafted (the next one drafted after a look the rule put off, as far as the draft
  // batch went) is finished first: a look never reads one variant a wave ahead of another, which the sample ratio check
  // would take for contacts missing from the other (docs/decisions/experiments-pacing.md, "Pacing: a wave per look").
  const target = Math.max(nextLookSample(e.plan, e.looks, config.waveShare), ...wave.live);
  let drafted = await draftWave(db, e, target, wave.live, config.draftBatch, now);
  if (drafted) wave = await passQueue(db).wave(e, maturedBy);
  let state: Paced['state'] = 'collecting';
  // The wave is whole when every variant has its share, or has no contact left to give.
  const whole = wave.live.every((n, i) => n >= target || wave.undrafted[i] === 0);
  if (whole && wave.inFlight.every((n) => n === 0)) {
    // A variant short of the look with no contact left cannot grow: the look is the last, as when nothing is pending.
    const exhausted = wave.live.some((n, i) => n < target && wave.undrafted[i] === 0);
    state = await lookAtExperiment(db, e, now, config.replyWindowMs, exhausted);
    const after = state === 'collecting' ? await repo.get(e.accountId, e.id) : null;
    if (after && after.status === 'running') {
      // The look was taken: the next wave goes out now. A look the rule put off (the plan replanned on the control's
      // rate, or too few outcomes to replan on yet) is made up by the wave after, as if taken at what the wave reached.
      const looked = after.looks.length > e.looks.length;
      const reached = Math.min(...wave.live) / after.plan.plannedPerVariant;
      const next = nextLookSample(after.plan, looked ? after.looks : [...after.looks, reached], config.waveShare);
      drafted += await draftWave(db, after, next, wave.live, Math.max(0, config.draftBatch - drafted), now);
      wave = await passQueue(db).wave(after, maturedBy);
    }
  }
  return { drafted, state, nextLookAt: dueAgain(e, wave, now, config.replyWindowMs) };
}

/** Mail still to draft or send: the next pass; else when the wave's last mail is a reply window old (a sequence's: and its sequence). */
function dueAgain(e: Experiment, wave: Wave, now: number, windowMs: number) {
  const waiting = wave.inFlight.some((n) => n > 0);
  if (!waiting || wave.unsent > 0 || wave.lastSentAt === null) return now;
  return Math.max(now, wave.lastSentAt + windowMs + judgedAfterMs(e));
}

/**
 * The maintenance pass at `now`: the running experiments due by `now`, at most `passBatches` × `passLimit`, in
 * round-robin order across accounts (pass-queue.ts), loaded and attended to `passLimit` at a time; each is
 * due again when paceExperiment says. One experiment's failure ends its turn in this pass; the others go on.
 */
export async function runExperiments(
  db: Db,
  config: PassConfig,
  log?: Logger,
  now = Date.now(),
): Promise<{ attended: number; drafted: number; decided: number }> {
  const queue = passQueue(db);
  // The pass's order is fixed once, so every account gets its turn before any gets a second (round-robin).
  const order = await queue.due(now, config.passLimit * config.passBatches);
  let attended = 0;
  let drafted = 0;
  let decided = 0;
  for (let at = 0; at < order.length; at += config.passLimit) {
    for (const e of await queue.load(order.slice(at, at + config.passLimit))) {
      attended++;
      try {
        const paced = await paceExperiment(db, e, now, config);
        drafted += paced.drafted;
        if (paced.state !== 'collecting' && paced.state !== 'paused') decided++;
        await queue.attended(e, now, paced.nextLookAt);
      } catch (err) {
        log?.warn({ err, experimentId: e.id, accountId: e.accountId }, 'experiment pass failed');
        // To the back of the line: the next pass tries it again after those due before it.
        await queue.attended(e, now, now).catch(() => undefined);
      }
    }
  }
  return { attended, drafted, decided };
}
