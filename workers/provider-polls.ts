import { sweepProviderPolls } from '../src/channels/provider-poll.js';
import { pollProviderEvents } from '../src/inbound/network-replies.service.js';
import { providerPollsQueue } from '../src/jobs/provider-polls.js';
import { definePool } from './pool.js';

/** The provider-polls pool: PROVIDER_POLLS_CONCURRENCY jobs at a time; its sweep is scheduled at start. */
export const providerPollsPool = definePool(providerPollsQueue, {
  handlers: {
    // Provider events: replies and accepted requests from the professional network, the ad platform's
    // metrics; a network reply acts as a mail reply does (src/inbound/network-replies.service.ts).
    providerPoll: async (p, { deps }) => pollProviderEvents(deps, p.accountId, p.kind),
    providerPollSweep: async (_p, { deps }) => ({ queued: await sweepProviderPolls(deps) }),
  },
  options: (deps) => ({ concurrency: deps.config.providerPolls.concurrency }),
});
