import { createBatcher, type Batcher } from '../src/batcher.js';
import type { Deps } from '../src/deps.js';
import { webhookEvent, webhookEventsQueue } from '../src/jobs/webhook-events.js';
import { failDelivery, handDeliveries, type HandOutcome } from '../src/webhooks/events.service.js';
import { agentLease, definePool } from './pool.js';

/**
 * Deliveries whose jobs run at the same time are handed over together (one transaction, one drain per
 * account); a worker running one job at a time hands each alone. Two batches may be in flight, so a
 * batch gathers while the previous one commits.
 */
const batchers = new WeakMap<Deps, Batcher<string, HandOutcome>>();

function batcherFor(deps: Deps): Batcher<string, HandOutcome> {
  let batcher = batchers.get(deps);
  if (!batcher) {
    const log = deps.logger.child({ queue: webhookEvent.queue, job: webhookEvent.name });
    batcher = createBatcher(
      async (ids: string[]) => {
        const answers = await handDeliveries(deps, ids, log);
        return ids.map((id) => answers.get(id) ?? new Error(`no answer for ${id}`));
      },
      { maxBatch: 200, maxInFlight: 2 },
    );
    batchers.set(deps, batcher);
  }
  return batcher;
}

/** The webhook-events pool: WEBHOOK_EVENTS_CONCURRENCY hand-overs at a time, on the agent's lease. */
export const webhookEventsPool = definePool(webhookEventsQueue, {
  handlers: {
    /** Hands one accepted delivery to the agent; on the last failed attempt the log records Worker Error. */
    webhookEvent: async ({ deliveryId }, { deps, job }) => {
      try {
        return { outcome: await batcherFor(deps).submit(deliveryId) };
      } catch (err) {
        if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
          await failDelivery(deps, deliveryId, `the worker could not hand it to the agent: ${(err as Error).message}`).catch(() => {});
        }
        throw err;
      }
    },
  },
  options: (deps) => ({ concurrency: deps.config.webhooks.eventsConcurrency, ...agentLease(deps) }),
});
