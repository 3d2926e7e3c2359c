import { inboundParse } from '../../src/jobs/inbound-parse.job.js';
import { inboundSweep } from '../../src/jobs/inbound-sweep.job.js';
import { processWithinTries, sweepInbound, SWEEP_EVERY_MS } from '../../src/inbound/intake.service.js';
import type { Deps } from '../../src/deps.js';
import { defineProcessor } from '../create-worker.js';

export const inboundParseProcessor = defineProcessor({
  job: inboundParse,
  run: async (p, { rt, log }) => processWithinTries(rt, p.id, log),
});

export const inboundSweepProcessor = defineProcessor({
  job: inboundSweep,
  run: async (_p, { rt }) => sweepInbound(rt),
});

export const INBOUND_PROCESSORS = [inboundParseProcessor, inboundSweepProcessor];

/** Registers the repeating inbound sweep. */
export async function scheduleInboundSweep(rt: Pick<Deps, 'queues'>): Promise<void> {
  const queue = rt.queues.get(inboundSweep.queue);
  if (!queue) throw new Error('inbound-mail queue is not open');
  await queue.upsertJobScheduler(
    inboundSweep.key({}),
    { every: SWEEP_EVERY_MS },
    { name: inboundSweep.name, data: {}, opts: inboundSweep.options },
  );
}
