import { sweepAgent } from '../src/agent/maintenance.service.js';
import { pruneInbound } from '../src/inbound/intake.service.js';
import { maintenanceQueue } from '../src/jobs/maintenance.js';
import { aggregateAccount, sweepConversions } from '../src/measurement/conversions.service.js';
import { pruneBotVisits } from '../src/measurement/retention.js';
import { runRollupPass } from '../src/results/rollups.service.js';
import { pruneDeliveries, sweepDeliveries } from '../src/webhooks/events.service.js';
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
      webhooks: { ...(await sweepDeliveries(deps, log)), ...(await pruneDeliveries(deps, log)) },
      conversionAccountsQueued: await sweepConversions(deps),
      inbound: await pruneInbound(deps, log),
      botVisits: await pruneBotVisits(deps, log),
      resultsRolledUp: await runRollupPass(deps.db, log),
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
