import { inboundParse } from '../../src/jobs/inbound-parse.job.js';
import { inboundSweep } from '../../src/jobs/inbound-sweep.job.js';
import { providerPoll, providerPollSweep } from '../../src/jobs/provider-poll.job.js';
import { POLL_EVERY_MS, sweepProviderPolls } from '../../src/channels/provider-poll.js';
import { processWithinTries, sweepInbound, SWEEP_EVERY_MS } from '../../src/inbound/intake.service.js';
import { pollProviderEvents } from '../../src/inbound/network-replies.service.js';
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

// Provider events: replies and accepted requests from the professional network arrive here too;
// a reply acts as a mail reply does (the lead, its sequences, the agent's wake: src/inbound/network-replies.service.ts).
export const providerPollProcessor = defineProcessor({
  job: providerPoll,
  run: async (p, { rt }) => pollProviderEvents(rt, p.accountId, p.kind),
});

export const providerPollSweepProcessor = defineProcessor({
  job: providerPollSweep,
  run: async (_p, { rt }) => ({ queued: await sweepProviderPolls(rt) }),
});

export const INBOUND_PROCESSORS = [inboundParseProcessor, inboundSweepProcessor, providerPollProcessor, providerPollSweepProcessor];

/** Registers the repeating inbound sweep and the provider polls' sweep. */
export const scheduleInboundSweep = async (rt: Pick<Deps, 'queues' | 'logger'>) => {
  await scheduleRepeating(rt, inboundSweep, SWEEP_EVERY_MS);
  await scheduleRepeating(rt, providerPollSweep, POLL_EVERY_MS);
};
