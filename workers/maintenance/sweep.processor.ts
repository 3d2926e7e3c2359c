import { sweepAgent } from '../../src/agent/maintenance.service.js';
import { pruneInbound } from '../../src/inbound/intake.service.js';
import { maintenanceSweep } from '../../src/jobs/maintenance-sweep.job.js';
import type { Deps } from '../../src/deps.js';
import { repairRuns } from '../../src/workflows/run-repair.js';
import { repairSchedulers } from '../../src/workflows/workflows.service.js';
import { pruneDeliveries, sweepDeliveries } from '../../src/webhooks/events.service.js';
import { sweepConversions } from '../../src/measurement/conversions.service.js';
import { pruneBotVisits } from '../../src/measurement/retention.js';
import { runRollupPass } from '../../src/results/rollups.service.js';
import { defineProcessor, scheduleRepeating } from '../create-worker.js';

export const sweepProcessor = defineProcessor({
  job: maintenanceSweep,
  run: async (_payload, { rt, log }) => ({
    ...(await sweepAgent(rt, log)),
    schedulersRepaired: await repairSchedulers(rt),
    workflowRunsRepaired: await repairRuns(rt),
    webhooks: { ...(await sweepDeliveries(rt, log)), ...(await pruneDeliveries(rt, log)) },
    conversionAccountsQueued: await sweepConversions(rt),
    inbound: await pruneInbound(rt, log),
    botVisits: await pruneBotVisits(rt, log),
    resultsRolledUp: await runRollupPass(rt.db, log),
  }),
});

/** Registers the repeating sweep (a BullMQ job scheduler: one per queue however many workers start it). */
export const scheduleSweep = (rt: Pick<Deps, 'config' | 'queues' | 'logger'>) =>
  scheduleRepeating(rt, maintenanceSweep, rt.config.maintenance.sweepEveryMs);
