import type { z } from 'zod';
import { int } from '../env-rules.js';

/** Settings of the durable events (src/events/): their outbox's sweep and how long a delivered event is kept. */
export const eventsEnv = {
  EVENTS_SWEEP_AFTER_MS: int(30_000, 0),
  EVENTS_KEEP_DAYS: int(7),
  EVENTS_PAUSE_BEFORE_QUEUE_MS: int(0, 0),
} satisfies z.ZodRawShape;

export function eventsConfig(env: z.output<z.ZodObject<typeof eventsEnv>>) {
  return {
    /** An undelivered event older than this is queued again by the maintenance sweep (its own job may still be on the way). */
    sweepAfterMs: env.EVENTS_SWEEP_AFTER_MS,
    /** A delivered event's outbox row is removed after this long. */
    keepMs: env.EVENTS_KEEP_DAYS * 86_400_000,
    /** Pause between an event's commit and queueing its delivery: 0 in production; kill tests raise it to die in between. */
    pauseBeforeQueueMs: env.EVENTS_PAUSE_BEFORE_QUEUE_MS,
  };
}
