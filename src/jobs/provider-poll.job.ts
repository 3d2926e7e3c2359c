import { z } from 'zod';
import { defineJob } from './registry.js';

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

/** Every PROVIDER_POLL_EVERY_MS: one `provider.poll` per connected account (the oldest polled first, bounded). */
export const providerPollSweep = defineJob({
  queue: 'inbound-mail',
  name: 'provider.poll-sweep',
  payload: z.object({}),
  options: { attempts: 1, removeOnComplete: true },
  description: 'Queues a poll for each account with a provider connection; a poll already waiting absorbs the repeat.',
  // The id of its job scheduler: one poll schedule per queue.
  jobId: () => 'provider-poll-sweep',
});
