import { dispatchTurn, recordTurn, type Recorded } from '../agent/agent.service.js';
import { requestDrain } from '../agent/runtime.js';
import type { Logger } from '../logger.js';
import { enqueue } from '../jobs/registry.js';
import { webhookEvent, webhookEventJobId } from '../jobs/webhook-event.job.js';
import type { Runtime } from '../runtime.js';
import { webhooksRepository } from './webhooks.repository.js';

const JSONB_UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Postgres jsonb refuses U+0000 and lone surrogates (both legal as JSON escapes); the agent gets U+FFFD
 * in their place. The log keeps the body exactly as sent.
 */
function jsonbSafe(value: unknown): unknown {
  if (typeof value === 'string') return value.replace(JSONB_UNSAFE, '\uFFFD');
  if (Array.isArray(value)) return value.map(jsonbSafe);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [jsonbSafe(k) as string, jsonbSafe(v)]));
  }
  return value;
}

export type HandOutcome = 'handed' | 'already handed' | 'not handed';

/**
 * Hands an accepted delivery to its account's agent: an `event` turn, origin `hook`, whose data is the
 * payload labelled with the hook's label (outside data: the brain only ever sees it in a data block).
 * Under the delivery row's lock the turn is recorded and linked in one transaction, so running this
 * twice records one turn; the drain is asked for after commit (and again on a repeat: idempotent).
 */
export async function handDelivery(rt: Runtime, deliveryId: string, log: Logger): Promise<HandOutcome> {
  const result = await rt.db.transaction(async (trx): Promise<{ outcome: HandOutcome; recorded?: Recorded; accountId?: string; turnId?: string }> => {
    const repo = webhooksRepository(trx);
    const delivery = await repo.findDelivery(deliveryId, true);
    if (!delivery || delivery.outcome !== 'Accepted' || delivery.body === null) return { outcome: 'not handed' };
    if (delivery.turnId) return { outcome: 'already handed', accountId: delivery.accountId, turnId: delivery.turnId };
    const hook = await repo.findHook(delivery.hookId);
    if (!hook) return { outcome: 'not handed' };
    const recorded = await recordTurn(trx, rt.config, {
      accountId: delivery.accountId,
      kind: 'event',
      origin: 'hook',
      data: { label: hook.label, content: jsonbSafe(JSON.parse(delivery.body)) },
    });
    await repo.setTurn(delivery.accountId, deliveryId, recorded.turn.id);
    return { outcome: 'handed', recorded };
  });
  if (result.recorded) await dispatchTurn(rt, result.recorded);
  else if (result.outcome === 'already handed') {
    // The first run may have died between commit and dispatch; asking again is a no-op otherwise.
    await requestDrain(rt, result.accountId!, `turn-${result.turnId!}`);
  }
  log.info({ deliveryId, outcome: result.outcome, turnId: result.recorded?.turn.id ?? result.turnId }, 'webhook delivery handed to the agent');
  return result.outcome;
}

/** The worker gave up on a delivery: the log says Worker Error (and it stops being re-queued). */
export async function failDelivery(rt: Runtime, deliveryId: string, error: string): Promise<void> {
  await webhooksRepository(rt.db).markWorkerError(deliveryId, error.slice(0, 500));
}

/**
 * Sweeper step (DESIGN rule 2): accepted deliveries older than the orphan age whose job never ran
 * (the API died between commit and enqueue, or the job was lost) are queued again under their
 * deterministic jobId, so one still waiting in the queue is not queued twice.
 */
export async function sweepDeliveries(rt: Runtime, log: Logger, now = Date.now()): Promise<{ requeued: number }> {
  const ids = await webhooksRepository(rt.db).unhanded(now - rt.config.maintenance.orphanAfterMs, 500);
  for (const deliveryId of ids) await enqueue(rt.queues, webhookEvent, { deliveryId }, { jobId: webhookEventJobId(deliveryId) });
  if (ids.length) log.info({ requeued: ids.length }, 'webhook sweep');
  return { requeued: ids.length };
}
