import { dispatchTurns, recordTurns, type TurnInput } from '../agent/messages/agent.service.js';
import { requestDrain } from '../agent/core/drain.js';
import type { Logger } from '../logger.js';
import { enqueue } from '../jobs/registry.js';
import { webhookEvent } from '../jobs/webhook-events.js';
import type { Deps } from '../deps.js';
import { webhooksRepository } from './webhooks.repository.js';
import { MAX_JSON_DEPTH } from './webhooks.types.js';

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching U+0000 is the point (jsonb refuses it).
const JSONB_UNSAFE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * Postgres jsonb refuses U+0000 and lone surrogates (both legal as JSON escapes); the agent gets U+FFFD
 * in their place. The log keeps the body exactly as sent. Iterative, so no body can exhaust the stack
 * here; a body nested deeper than intake accepts (logged before that rule) is handed as its text, which
 * every later step (the turn's jsonb, the brain's data block) can serialise.
 */
export function jsonbSafe(value: unknown, text: string): unknown {
  const clean = (s: string) => s.replace(JSONB_UNSAFE, '\uFFFD');
  type Slot = { from: unknown; depth: number; put: (v: unknown) => void };
  let out: unknown;
  let deepest = 0;
  const stack: Slot[] = [{ from: value, depth: 0, put: (v) => (out = v) }];
  while (stack.length) {
    const { from, depth, put } = stack.pop()!;
    if (typeof from === 'string') put(clean(from));
    else if (Array.isArray(from)) {
      const copy: unknown[] = new Array(from.length);
      put(copy);
      deepest = Math.max(deepest, depth + 1);
      for (let i = 0; i < from.length; i++) stack.push({ from: from[i], depth: depth + 1, put: (x) => (copy[i] = x) });
    } else if (from && typeof from === 'object') {
      const copy: Record<string, unknown> = {};
      put(copy);
      deepest = Math.max(deepest, depth + 1);
      for (const [k, v] of Object.entries(from)) {
        const key = clean(k);
        // An own property even for `__proto__` (JSON.parse makes one), never the prototype.
        Object.defineProperty(copy, key, { value: null, writable: true, enumerable: true, configurable: true });
        stack.push({ from: v, depth: depth + 1, put: (x) => (copy[key] = x) });
      }
    } else put(from);
  }
  return deepest > MAX_JSON_DEPTH ? clean(text) : out;
}

export type HandOutcome = 'handed' | 'already handed' | 'not handed';

/**
 * Hands accepted deliveries to their accounts' agent: for each, an `event` turn, origin `hook`, whose
 * data is the payload labelled with the hook's label (outside data: the brain only ever sees it in a
 * data block). One transaction for the whole batch: the delivery rows are locked, their turns recorded
 * (one insert) and linked (one update), so running a delivery twice records one turn. After commit one
 * drain is queued per account (and asked for again on a repeat: idempotent).
 *
 * Per delivery the answer is its outcome, or the Error that stops only it (a body that does not parse:
 * its job fails and retries, the others are handed). Throws only when the batch as a whole failed.
 */
export async function handDeliveries(
  deps: Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues'>,
  deliveryIds: string[],
  log: Logger,
): Promise<Map<string, HandOutcome | Error>> {
  const answers = new Map<string, HandOutcome | Error>(deliveryIds.map((id) => [id, 'not handed']));
  const again = new Map<string, string>();
  const recorded = await deps.db.transaction(async (trx) => {
    const repo = webhooksRepository(trx);
    const handing: { deliveryId: string; input: TurnInput }[] = [];
    for (const d of await repo.lockForHanding(deliveryIds)) {
      if (d.outcome !== 'Accepted' || d.body === null || d.label === null) continue;
      if (d.turnId) {
        answers.set(d.deliveryId, 'already handed');
        again.set(d.accountId, d.turnId);
        continue;
      }
      try {
        const content = jsonbSafe(JSON.parse(d.body), d.body);
        handing.push({
          deliveryId: d.deliveryId,
          input: { accountId: d.accountId, kind: 'event', origin: 'hook', data: { label: d.label, content } },
        });
      } catch (err) {
        answers.set(d.deliveryId, err as Error);
      }
    }
    const made = await recordTurns(
      trx,
      deps.config,
      handing.map((h) => h.input),
    );
    await repo.setTurns(handing.map((h, i) => ({ deliveryId: h.deliveryId, turnId: made[i]!.turn.id })));
    for (const h of handing) answers.set(h.deliveryId, 'handed');
    return made.map((r, i) => ({ ...r, deliveryId: handing[i]!.deliveryId }));
  });
  await dispatchTurns(deps, recorded);
  // A first run may have died between commit and dispatch; asking again is a no-op otherwise.
  await Promise.all([...again].map(([accountId, turnId]) => requestDrain(deps, accountId, { why: 'turn', turnId })));
  if (recorded.length)
    log.info({ handed: recorded.map((r) => ({ deliveryId: r.deliveryId, turnId: r.turn.id })) }, 'webhook deliveries handed to the agent');
  if (again.size)
    log.info(
      { alreadyHanded: [...answers].filter(([, a]) => a === 'already handed').map(([id]) => id) },
      'webhook deliveries already handed; drain asked again',
    );
  return answers;
}

/** The worker gave up on a delivery: the log says Worker Error (and it stops being re-queued). */
export async function failDelivery(deps: Pick<Deps, 'db'>, deliveryId: string, error: string): Promise<void> {
  await webhooksRepository(deps.db).markWorkerError([deliveryId], error.slice(0, 500));
}

/**
 * Sweeper step (docs/rules.md, "Commit, then enqueue, then repair"): accepted deliveries older than the orphan age whose job never ran
 * (the API died between commit and enqueue, or the job was lost) are queued again under their
 * deterministic key, so one still waiting in the queue is not queued twice.
 */
export async function sweepDeliveries(
  deps: Pick<Deps, 'config' | 'db' | 'queues'>,
  log: Logger,
  now = Date.now(),
): Promise<{ requeued: number }> {
  const ids = await webhooksRepository(deps.db).unhanded(now - deps.config.maintenance.orphanAfterMs, 500);
  for (const deliveryId of ids) await enqueue(deps.queues, webhookEvent, { deliveryId });
  if (ids.length) log.info({ requeued: ids.length }, 'webhook sweep');
  return { requeued: ids.length };
}
