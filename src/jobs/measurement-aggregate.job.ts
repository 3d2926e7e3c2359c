import { z } from 'zod';
import { newId } from '../ids.js';
import { defineJob } from './registry.js';

/** Why an aggregation was queued: new conversions (or the sweep found some), or the job before handed on. */
export type AggregateReason = { why: 'new' } | { why: 'more' };

/**
 * Attributes an account's stored conversions (last touch) and counts them on their channels. One job
 * per account waits at a time for new conversions; a run that leaves rows hands on to a new job.
 */
export const measurementAggregate = defineJob({
  queue: 'maintenance',
  name: 'measurement.aggregate',
  payload: z.object({ accountId: z.string().min(1) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description:
    'Attributes new conversion events to their visit’s channel (last touch) and counts them; a counted row is never counted again.',
  // New conversions fold into the account's waiting job; a hand-on is its own job (this one still holds the key).
  jobId: (p, r: AggregateReason) =>
    r.why === 'new' ? `measurement-aggregate-${p.accountId}` : `measurement-aggregate-${p.accountId}-${newId('more')}`,
});
