import type { z } from 'zod';
import { int } from '../env-rules.js';

/** The default reply window, three days (getResults uses it when no config is passed). */
export const DEFAULT_REPLY_WINDOW_SECONDS = 3 * 24 * 60 * 60;

/** How experiments run (docs/decisions/experiments.md, "Reading an experiment"). */
export const experimentsEnv = {
  EXPERIMENT_REPLY_WINDOW_SECONDS: int(DEFAULT_REPLY_WINDOW_SECONDS, 0),
  EXPERIMENT_DRAFT_BATCH: int(200),
  EXPERIMENT_PASS_LIMIT: int(20),
  EXPERIMENT_PASS_BATCHES: int(10),
  EXPERIMENT_WAVE_PERCENT: int(5),
} satisfies z.ZodRawShape;

export function experimentsConfig(env: z.output<z.ZodObject<typeof experimentsEnv>>) {
  return {
    /**
     * A contact counts in a look only once its mail is this old: replies come in over days, and counting a mail
     * sent a minute ago as "no reply" would pull every rate down and favour whichever variant went out first.
     */
    replyWindowMs: env.EXPERIMENT_REPLY_WINDOW_SECONDS * 1000,
    /** Mail cards drafted per experiment per maintenance pass (a wave larger than this is drafted over several). */
    draftBatch: env.EXPERIMENT_DRAFT_BATCH,
    /** Running experiments one batch of the maintenance pass attends to (due ones, round-robin across accounts). */
    passLimit: env.EXPERIMENT_PASS_LIMIT,
    /** Batches one maintenance pass takes at most (it stops sooner when nothing more is due); the rest wait a pass. */
    passBatches: env.EXPERIMENT_PASS_BATCHES,
    /**
     * A wave (the mail one look reads) adds at least this share of the planned sample per variant, rounded up to the
     * plan's look interval (docs/decisions/experiments-pacing.md, "Pacing: a wave per look"). Capped at the whole plan.
     */
    waveShare: Math.min(100, env.EXPERIMENT_WAVE_PERCENT) / 100,
  };
}
