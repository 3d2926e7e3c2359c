import { measurementAggregate } from '../../src/jobs/measurement-aggregate.job.js';
import { aggregateAccount } from '../../src/measurement/conversions.service.js';
import { defineProcessor } from '../create-worker.js';

/** Counts one account's new conversions; its failures (bounded by the job's attempts) are that account's alone. */
export const measurementAggregateProcessor = defineProcessor({
  job: measurementAggregate,
  run: async ({ accountId }, { rt, log }) => {
    const out = await aggregateAccount(rt, accountId);
    if (out.counted) log.info({ accountId, ...out }, 'conversions aggregated');
    return out;
  },
});
