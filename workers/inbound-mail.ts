import { sweepProviderPolls } from '../src/channels/provider-poll.js';
import { processWithinTries, sweepInbound } from '../src/inbound/intake.service.js';
import { pollProviderEvents } from '../src/inbound/network-replies.service.js';
import { forwardOperatorMail, sweepOperatorMail } from '../src/inbound/operator-mail.service.js';
import { inboundMailQueue } from '../src/jobs/inbound-mail.js';
import { definePool } from './pool.js';

/** The inbound-mail pool: INBOUND_MAIL_CONCURRENCY jobs at a time; its inbound sweep is scheduled at start. */
export const inboundMailPool = definePool(inboundMailQueue, {
  handlers: {
    inboundParse: async (p, { deps, log }) => processWithinTries(deps, p.id, log),
    inboundSweep: async (_p, { deps }) => ({ ...(await sweepInbound(deps)), operatorMail: await sweepOperatorMail(deps) }),
    operatorMailForward: async (p, { deps }) => forwardOperatorMail(deps, p.id),
    // For one release: provider polls left on this queue run as before (they have their own queue now).
    formerProviderPoll: async (p, { deps }) => pollProviderEvents(deps, p.accountId, p.kind),
    formerProviderPollSweep: async (_p, { deps }) => ({ queued: await sweepProviderPolls(deps) }),
  },
  options: (deps) => ({ concurrency: deps.config.inbound.concurrency }),
});
