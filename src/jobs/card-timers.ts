import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';
import { defineSweep } from './sweep.js';

/**
 * Resolves a card the trust ladder scheduled, at its `autoResolveAt`. The processor updates the card
 * only while it is still pending with that same deadline, so a person acting first, a snooze or a
 * re-schedule turns this job into a no-op.
 */
export const cardAutoResolve = defineJob({
  queue: 'card-timers',
  name: 'card.auto-resolve',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), at: z.number().int() }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: 'Auto-resolves a trusted card at its deadline; a stale deadline or a card someone already acted on is a no-op.',
  jobId: (p) => `card-auto-${p.cardId}-${p.at}`,
});

/** Returns a snoozed card to the queue at `until`; a card re-snoozed to another time is left alone. */
export const cardWake = defineJob({
  queue: 'card-timers',
  name: 'card.wake',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), until: z.number().int() }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: 'Brings a snoozed card back to pending at its snoozedUntil; a changed snooze makes it a no-op.',
  jobId: (p) => `card-wake-${p.cardId}-${p.until}`,
});

/**
 * Starts the agent's revision turn for a card in `needs_revision` (about 30 seconds after the request).
 * Claiming the card (setting its revision turn) is a conditional update, so a repeat starts nothing.
 */
export const cardRevise = defineJob({
  queue: 'card-timers',
  name: 'card.revise',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), version: z.number().int() }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: "Kicks off the agent's revision turn for a card that needs changes; a card already claimed is a no-op.",
  jobId: (p) => `card-revise-${p.cardId}-v${p.version}`,
});

/**
 * Returns a revised card to `pending` once its revision turn has finished. Fails (and retries on a fixed
 * backoff) while the turn is still running; a card already returned is a no-op.
 */
export const cardRevisionReturn = defineJob({
  queue: 'card-timers',
  name: 'card.revision-return',
  payload: z.object({ accountId: z.string().min(1), cardId: z.string().min(1), turnId: z.string().min(1) }),
  options: {
    attempts: 120,
    backoff: { type: 'fixed', delay: 5_000 },
  },
  description: 'Puts a revised card back in the queue when its revision turn is done; already returned is a no-op.',
  // One return per revision of the card: the version the request made, which the payload does not carry.
  jobId: (p, r: { version: number }) => `card-revision-return-${p.cardId}-v${r.version}`,
});

/**
 * The card-timers repair sweep (docs/rules.md, "Commit, then enqueue, then repair"), every CARD_SWEEP_MS:
 * applies the trust ladder to cards it has not seen and does the work of any timer whose job was lost. Every
 * step is a conditional update, so overlapping sweeps and the timers themselves never act twice.
 */
export const cardSweep = defineSweep({
  queue: 'card-timers',
  name: 'card.sweep',
  description: 'Applies the trust ladder to new cards and repairs lost card timers; conditional updates make repeats harmless.',
  schedulerId: 'card-sweep',
  everyMs: (config) => config.review.sweepEveryMs,
});

/**
 * Delivers one recorded event (src/events/outbox.ts: a card's decision) to the handlers the areas registered: each
 * runs once per event (the row notes it), and each is idempotent, so a retry or the sweep's repeat is harmless.
 */
export const eventDeliver = defineJob({
  queue: 'card-timers',
  name: 'event.deliver',
  payload: z.object({ accountId: z.string().min(1), eventId: z.string().min(1) }),
  options: {
    attempts: 8,
    backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 },
  },
  description: "Runs a decision's follow-ups (a workflow gate, an experiment's adoption); a handler already noted is skipped.",
  jobId: (p) => `event-${p.eventId}`,
});

/** The card-timers queue: a card's deadlines, its revision steps and its decisions' follow-ups (workers/card-timers.ts). */
export const cardTimersQueue = defineQueue('card-timers', {
  cardAutoResolve,
  cardWake,
  cardRevise,
  cardRevisionReturn,
  cardSweep,
  eventDeliver,
});
