import { failDelivery, handDelivery } from '../../src/webhooks/events.service.js';
import { webhookEvent } from '../../src/jobs/webhook-event.job.js';
import { defineProcessor } from '../create-worker.js';

/** Hands one accepted delivery to the agent; on the last failed attempt the log records Worker Error. */
export const webhookEventProcessor = defineProcessor({
  job: webhookEvent,
  run: async ({ deliveryId }, { rt, log, job }) => {
    try {
      return { outcome: await handDelivery(rt, deliveryId, log) };
    } catch (err) {
      if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        await failDelivery(rt, deliveryId, `the worker could not hand it to the agent: ${(err as Error).message}`).catch(() => {});
      }
      throw err;
    }
  },
});
