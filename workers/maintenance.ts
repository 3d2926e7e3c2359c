import { runExperiments } from '../src/experiments/pacing.js';
import { sweepAgent } from '../src/agent/turns/maintenance.service.js';
import { sweepEvents } from '../src/events/outbox.js';
import { maintenanceQueue } from '../src/jobs/maintenance.js';
import { runImport, sweepImports } from '../src/leads/import-jobs.js';
import { aggregateAccount, sweepConversions } from '../src/measurement/conversions.service.js';
import { runRollupPass } from '../src/results/rollups.service.js';
import { runRetentionPass } from '../src/retention/retention.service.js';
import { sweepDeliveries } from '../src/webhooks/events.service.js';
import { repairRuns } from '../src/workflows/run-repair.js';
import { repairSchedulers } from '../src/workflows/workflows.service.js';
import { definePool } from './pool.js';

/**
 * The maintenance pool: MAINTENANCE_CONCURRENCY jobs at a time; each area's sweep is its own job, on its
 * own scheduler (registered at start), so one that throws fails alone and the others run on time.
 */
export const maintenancePool = definePool(maintenanceQueue, {
  handlers: {
    turnsSweep: async (_payload, { deps, log }) => sweepAgent(deps, log),
    workflowSchedulersSweep: async (_payload, { deps }) => ({ schedulersRepaired: await repairSchedulers(deps) }),
    workflowRunsSweep: async (_payload, { deps }) => ({ workflowRunsRepaired: await repairRuns(deps) }),
    webhookDeliveriesSweep: async (_payload, { deps, log }) => sweepDeliveries(deps, log),
    conversionsSweep: async (_payload, { deps }) => ({ conversionAccountsQueued: await sweepConversions(deps) }),
    rollupsSweep: async (_payload, { deps, log }) => runRollupPass(deps.db, log),
    retentionSweep: async (_payload, { deps, log }) => runRetentionPass(deps, log),
    experimentsSweep: async (_payload, { deps, log }) => runExperiments(deps.db, deps.config.experiments, log),
    eventsSweep: async (_payload, { deps }) => ({ events: await sweepEvents(deps) }),
    leadImportsSweep: async (_payload, { deps }) => sweepImports(deps),
    /** The retired single sweep: its work is the sweeps' above, so a job of it left in Redis only completes. */
    maintenanceSweep: async () => ({ retired: true }),
    /** Counts one account's new conversions; its failures (bounded by the job's attempts) are that account's alone. */
    measurementAggregate: async ({ accountId }, { deps, log }) => {
      const out = await aggregateAccount(deps, accountId);
      if (out.counted) log.info({ accountId, ...out }, 'conversions aggregated');
      return out;
    },
    /** One uploaded CSV import; its rows and its final state commit together. */
    leadsImport: async ({ accountId, importId }, { deps }) => runImport(deps, accountId, importId),
  },
  options: (deps) => ({ concurrency: deps.config.maintenance.concurrency }),
});
