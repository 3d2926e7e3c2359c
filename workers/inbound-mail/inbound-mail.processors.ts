import { inboundParse } from '../../src/jobs/inbound-parse.job.js';
import { inboundSweep } from '../../src/jobs/inbound-sweep.job.js';
import { processWithinTries, sweepInbound, SWEEP_EVERY_MS } from '../../src/inbound/intake.service.js';
import type { Deps } from '../../src/deps.js';
import { defineProcessor, scheduleRepeating } from '../create-worker.js';

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
export const scheduleInboundSweep = (rt: Pick<Deps, 'queues'>) => scheduleRepeating(rt, inboundSweep, SWEEP_EVERY_MS);
