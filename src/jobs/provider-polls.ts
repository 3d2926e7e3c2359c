import { z } from 'zod';
import { defineJob, defineQueue } from './contract.js';
import { defineSweep } from './sweep.js';

/**
 * Reads one account's provider events (the professional network's, the ad platform's): a page of
 * `GET /v1/events` after its stored cursor, applied with the cursor in one transaction. Each connected
 * account polls in its own job, so a failing provider fails (and retries, a few times) alone.
 */
export const providerPoll = defineJob({
  queue: 'provider-polls',
  name: 'provider.poll',
  payload: z.object({ accountId: z.string().min(1), kind: z.enum(['network', 'ads']) }),
  options: { attempts: 3, backoff: { type: 'exponential', delay: 5_000, jitter: 0.2 } },
  description: 'Applies a page of one account’s provider events after its cursor; an event applied twice counts once (its id).',
  jobId: (p) => `provider-poll-${p.kind}-${p.accountId}`,
});

/** Every minute: one `provider.poll` per connected account (the oldest polled first, bounded). */
export const providerPollSweep = defineSweep({
  queue: 'provider-polls',
  name: 'provider.poll-sweep',
  description: 'Queues a poll for each account with a provider connection; a poll already waiting absorbs the repeat.',
  schedulerId: 'provider-poll-sweep',
  everyMs: () => 60_000,
});

/**
 * The provider-polls queue: the polls of the providers' event feeds (workers/provider-polls.ts). They ran
 * on the inbound-mail queue until this release; a poll left there is still run there for one release.
 */
export const providerPollsQueue = defineQueue('provider-polls', { providerPoll, providerPollSweep });
