import { runExperiments } from '../src/agent/experiments.service.js';
import { sweepAgent } from '../src/agent/maintenance.service.js';
import { sweepEvents } from '../src/events/outbox.js';
import { maintenanceQueue } from '../src/jobs/maintenance.js';
import { aggregateAccount, sweepConversions } from '../src/measurement/conversions.service.js';
import { runRollupPass } from '../src/results/rollups.service.js';
import { runRetentionPass } from '../src/retention/retention.service.js';
import { sweepDeliveries } from '../src/webhooks/events.service.js';
import { repairRuns } from '../src/workflows/run-repair.js';
import { repairSchedulers } from '../src/workflows/workflows.service.js';
import { definePool } from './pool.js';

/** The maintenance pool: MAINTENANCE_CONCURRENCY jobs at a time; the sweeper is scheduled at start. */
export const maintenancePool = definePool(maintenanceQueue, {
  handlers: {
    maintenanceSweep: async (_payload, { deps, log }) => ({
      ...(await sweepAgent(deps, log)),
      schedulersRepaired: await repairSchedulers(deps),
      workflowRunsRepaired: await repairRuns(deps),
      webhooks: await sweepDeliveries(deps, log),
      conversionAccountsQueued: await sweepConversions(deps),
      resultsRolledUp: await runRollupPass(deps.db, log),
      retention: await runRetentionPass(deps, log),
      experiments: await runExperiments(deps.db, deps.config.experiments, log),
      // --- events (src/events/outbox.ts): decisions' follow-ups never queued, or failed for good, are queued again. ---
      events: await sweepEvents(deps),
    }),
    /** Counts one account's new conversions; its failures (bounded by the job's attempts) are that account's alone. */
    measurementAggregate: async ({ accountId }, { deps, log }) => {
      const out = await aggregateAccount(deps, accountId);
      if (out.counted) log.info({ accountId, ...out }, 'conversions aggregated');
      return out;
    },
  },
  options: (deps) => ({ concurrency: deps.config.maintenance.concurrency }),
});
