import { sweepAgent } from '../src/agent/maintenance.service.js';
import { pruneInbound } from '../src/inbound/intake.service.js';
import { maintenanceQueue } from '../src/jobs/maintenance.js';
import { aggregateAccount, sweepConversions } from '../src/measurement/conversions.service.js';
import { pruneBotVisits } from '../src/measurement/retention.js';
import { pruneDeliveries, sweepDeliveries } from '../src/webhooks/events.service.js';
import { repairRuns } from '../src/workflows/run-repair.js';
import { repairSchedulers } from '../src/workflows/workflows.service.js';
import { definePool } from './pool.js';

/** The maintenance pool: MAINTENANCE_CONCURRENCY jobs at a time; the sweeper is scheduled at start. */
export const maintenancePool = definePool(maintenanceQueue, {
  handlers: {
    maintenanceSweep: async (_payload, { rt, log }) => ({
      ...(await sweepAgent(rt, log)),
      schedulersRepaired: await repairSchedulers(rt),
      workflowRunsRepaired: await repairRuns(rt),
      webhooks: { ...(await sweepDeliveries(rt, log)), ...(await pruneDeliveries(rt, log)) },
      conversionAccountsQueued: await sweepConversions(rt),
      inbound: await pruneInbound(rt, log),
      botVisits: await pruneBotVisits(rt, log),
    }),
    /** Counts one account's new conversions; its failures (bounded by the job's attempts) are that account's alone. */
    measurementAggregate: async ({ accountId }, { rt, log }) => {
      const out = await aggregateAccount(rt, accountId);
      if (out.counted) log.info({ accountId, ...out }, 'conversions aggregated');
      return out;
    },
  },
  options: (rt) => ({ concurrency: rt.config.maintenance.concurrency }),
});
