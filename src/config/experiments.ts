import type { z } from 'zod';
import { int } from '../env-rules.js';

/** The default reply window, three days (getResults uses it when no config is passed). */
export const DEFAULT_REPLY_WINDOW_SECONDS = 3 * 24 * 60 * 60;

/** How experiments run (docs/decisions/experiments.md, "Reading an experiment"). */
export const experimentsEnv = {
  EXPERIMENT_REPLY_WINDOW_SECONDS: int(DEFAULT_REPLY_WINDOW_SECONDS, 0),
  EXPERIMENT_DRAFT_BATCH: int(200),
  EXPERIMENT_PASS_LIMIT: int(20),
} satisfies z.ZodRawShape;

export function experimentsConfig(env: z.output<z.ZodObject<typeof experimentsEnv>>) {
  return {
    /**
     * A contact counts in a look only once its mail is this old: replies come in over days, and counting a mail
     * sent a minute ago as "no reply" would pull every rate down and favour whichever variant went out first.
     */
    replyWindowMs: env.EXPERIMENT_REPLY_WINDOW_SECONDS * 1000,
    /** Mail cards drafted per experiment per maintenance pass. */
    draftBatch: env.EXPERIMENT_DRAFT_BATCH,
    /** Running experiments read per maintenance pass (oldest first; the next pass takes the rest). */
    passLimit: env.EXPERIMENT_PASS_LIMIT,
  };
}
