import { sweepProviderPolls } from '../src/channels/provider-poll.js';
import { processWithinTries, sweepInbound } from '../src/inbound/intake.service.js';
import { pollProviderEvents } from '../src/inbound/network-replies.service.js';
import { forwardOperatorMail, sweepOperatorMail } from '../src/inbound/operator-mail.service.js';
import { inboundMailQueue } from '../src/jobs/inbound-mail.js';
import { definePool } from './pool.js';

/** The inbound-mail pool: INBOUND_MAIL_CONCURRENCY jobs at a time; its two sweeps (inbound, provider polls) are scheduled at start. */
export const inboundMailPool = definePool(inboundMailQueue, {
  handlers: {
    inboundParse: async (p, { deps, log }) => processWithinTries(deps, p.id, log),
    inboundSweep: async (_p, { deps }) => ({ ...(await sweepInbound(deps)), operatorMail: await sweepOperatorMail(deps) }),
    operatorMailForward: async (p, { deps }) => forwardOperatorMail(deps, p.id),
    // Provider events: replies and accepted requests from the professional network arrive here too;
    // a reply acts as a mail reply does (the lead, its sequences, the agent's wake: src/inbound/network-replies.service.ts).
    providerPoll: async (p, { deps }) => pollProviderEvents(deps, p.accountId, p.kind),
    providerPollSweep: async (_p, { deps }) => ({ queued: await sweepProviderPolls(deps) }),
  },
  options: (deps) => ({ concurrency: deps.config.inbound.concurrency }),
});
