import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';
import { defineSweep } from './sweep.js';

/**
 * Parses, matches, classifies and applies one stored inbound message. Settling is a conditional update
 * of a `received` row, so a second run changes nothing; tries are counted on the row and capped (a
 * message that keeps failing ends `malformed`, src/inbound/intake.service.ts).
 */
export const inboundParse = defineJob({
  queue: 'inbound-mail',
  name: 'inbound.parse',
  payload: z.object({ id: z.string().min(1) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description: 'Parses and applies one received message; only a still-received row is settled, so repeats are harmless.',
  // One live job per stored message.
  jobId: (p) => `inbound-parse-${p.id}`,
});

/**
 * Forwards one message to postmaster@ to the operator's address (INBOUND_POSTMASTER_FORWARD_TO). Only a row not
 * yet forwarded is sent and marked, and its tries are counted and capped, so repeats are harmless.
 */
export const operatorMailForward = defineJob({
  queue: 'inbound-mail',
  name: 'operator-mail.forward',
  payload: z.object({ id: z.string().min(1) }),
  options: { attempts: 3, backoff: { type: 'exponential', delay: 10_000, jitter: 0.2 } },
  description: 'Forwards one postmaster@ message to the operator address; a forwarded row is never sent again.',
  jobId: (p) => `operator-mail-forward-${p.id}`,
});

/** Every minute: hands messages left `received` (a lost enqueue, a crashed worker, retries used up) back to parsing. */
export const inboundSweep = defineSweep({
  queue: 'inbound-mail',
  name: 'inbound.sweep',
  description: 'Re-enqueues received messages older than a minute; the parse key dedupes jobs already waiting.',
  schedulerId: 'inbound-sweep',
  everyMs: () => 60_000,
});

/**
 * Reads one account's provider events: a page of `GET /v1/events` after its stored cursor,
 * applied with the cursor in one transaction. Each connected account polls in its own job, so a failing
 * provider fails (and retries, a few times) alone.
 */
export const providerPoll = defineJob({
  queue: 'inbound-mail',
  name: 'provider.poll',
  payload: z.object({ accountId: z.string().min(1), kind: z.enum(['network', 'ads']) }),
  options: { attempts: 3, backoff: { type: 'exponential', delay: 5_000, jitter: 0.2 } },
  description: 'Applies a page of one account’s provider events after its cursor; an event applied twice counts once (its id).',
  jobId: (p) => `provider-poll-${p.kind}-${p.accountId}`,
});

/** Every minute: one `provider.poll` per connected account (the oldest polled first, bounded). */
export const providerPollSweep = defineSweep({
  queue: 'inbound-mail',
  name: 'provider.poll-sweep',
  description: 'Queues a poll for each account with a provider connection; a poll already waiting absorbs the repeat.',
  schedulerId: 'provider-poll-sweep',
  everyMs: () => 60_000,
});

/** The inbound-mail queue: received mail and provider events (workers/inbound-mail.ts). */
export const inboundMailQueue = defineQueue('inbound-mail', {
  inboundParse,
  inboundSweep,
  operatorMailForward,
  providerPoll,
  providerPollSweep,
});
