import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';
import { providerPoll, providerPollSweep } from './provider-polls.js';
import { defineRetiredSweep, defineSweep } from './sweep.js';

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
 * The provider polls ran on this queue until they got their own (src/jobs/provider-polls.ts). For one
 * release a poll still queued here (left at deploy time, or added by a process of the previous release
 * during a rolling deploy) is run here, as before: polls of one account on both queues at once are
 * harmless (each page is applied with its cursor in one transaction; an event counts once, by its id).
 */
export const formerProviderPoll = defineJob({ ...providerPoll, queue: 'inbound-mail' });

/** The poll sweep's former schedule here: removed at start; a run of it left here queues the polls on their own queue. */
export const formerProviderPollSweep = defineRetiredSweep({
  queue: 'inbound-mail',
  name: providerPollSweep.name,
  description: 'Retired here: provider.poll-sweep runs on the provider-polls queue; a run left here does the same.',
  schedulerId: providerPollSweep.key({}),
});

/** The inbound-mail queue: received mail (workers/inbound-mail.ts), and for one release the provider polls left here. */
export const inboundMailQueue = defineQueue('inbound-mail', {
  inboundParse,
  inboundSweep,
  operatorMailForward,
  formerProviderPoll,
  formerProviderPollSweep,
});
