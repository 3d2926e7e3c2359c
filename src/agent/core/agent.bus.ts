import type { Config } from '../../config.js';
import { clusterNodesSetting, createSubscriber, keyspace, type Redis } from '../../redis.js';
import type { MessageView } from './agent.types.js';

type DoneListener = (turnId: string, view: MessageView | null) => void;
type CancelListener = (turnId: string) => void;

/**
 * Redis pub/sub between API and worker processes: `done` (a turn reached a terminal status, so a
 * waiting POST can answer; the worker's notice carries the finished message, so the waiter need not
 * read it back) and `cancel` (a later message asks the worker holding a turn to stop).
 * A lost notice only costs latency: waiters also re-read Postgres on a bounded interval, and a running
 * turn reads its interrupt flag from Postgres whenever this subscriber may have missed a cancel.
 */
export interface TurnBus {
  onDone(turnId: string, fn: DoneListener): () => void;
  onCancel(turnId: string, fn: CancelListener): () => void;
  /** A mark of the subscription's state now; compare with `heardSince`. */
  mark(): number;
  /**
   * True when the subscriber has been subscribed without a break since `mark` was taken: every cancel
   * published since then reached this process (a listener or `cancelled`).
   */
  heardSince(mark: number): boolean;
  /** A cancel for this turn arrived within the last minute (possibly before anyone listened). */
  cancelled(turnId: string): boolean;
  close(): void;
}

const buses = new Map<string, TurnBus>();

const channel = (config: Config, what: 'done' | 'cancel') => `${keyspace(config.queuePrefix)}:agent:${what}`;

/** Cancels remembered for late listeners (a turn claimed just before its cancel arrived). */
const CANCEL_MEMORY_MS = 60_000;
const CANCEL_MEMORY_MAX = 10_000;

/** Terminal notices that carry no message (expiry, recovery): waiters read the turn themselves. */
export async function publishDone(redis: Redis, config: Config, turnIds: string[]): Promise<void> {
  await Promise.all(turnIds.map((id) => redis.publish(channel(config, 'done'), id).catch(() => 0)));
}

/** A finished turn's notice with its message view, so a waiting request answers without a read. */
export async function publishFinished(redis: Redis, config: Config, view: MessageView): Promise<void> {
  await redis.publish(channel(config, 'done'), JSON.stringify(view)).catch(() => 0);
}

export async function publishCancel(redis: Redis, config: Config, turnIds: string[]): Promise<void> {
  await Promise.all(turnIds.map((id) => redis.publish(channel(config, 'cancel'), id).catch(() => 0)));
}

/** The id at the head of a notice's JSON (`publishFinished` writes `requestId` first). */
const LEADING_ID = /^\{"requestId":"([^"\\]+)"/;

/** A `done` message: a bare turn id, or a message view (JSON). */
function readDone(message: string): { turnId: string; view: MessageView | null } | null {
  if (!message.startsWith('{')) return { turnId: message, view: null };
  try {
    const view = JSON.parse(message) as MessageView;
    return typeof view.requestId === 'string' ? { turnId: view.requestId, view } : null;
  } catch {
    return null;
  }
}

/**
 * This process's subscriber (one connection, shared). It is closed with the producer connection it is
 * tied to, so a runtime's close() also ends it.
 */
export function turnBus(config: Config, tiedTo: Redis): TurnBus {
  const key = `${config.redisClusterNodes ? clusterNodesSetting(config.redisClusterNodes) : config.redisUrl}|${config.queuePrefix}`;
  const existing = buses.get(key);
  if (existing) return existing;
  // Named, so an operator (or a test) can tell this process's subscriber in CLIENT LIST.
  const sub = createSubscriber(config, `${keyspace(config.queuePrefix)}-turn-bus-${process.pid}`, tiedTo);
  const done = new Map<string, Set<DoneListener>>();
  const cancel = new Map<string, Set<CancelListener>>();
  const recentCancels = new Map<string, number>();
  const doneChannel = channel(config, 'done');
  const cancelChannel = channel(config, 'cancel');
  // `epoch` counts breaks in the subscription; `subscribed` says whether one is in place now.
  let epoch = 0;
  let subscribed = false;
  const subscribe = () => {
    const at = epoch;
    sub.subscribe(doneChannel, cancelChannel).then(
      () => {
        if (at === epoch) subscribed = true;
      },
      () => {},
    );
  };
  subscribe();
  sub.on('ready', () => {
    if (!subscribed) subscribe();
  });
  const lost = () => {
    epoch++;
    subscribed = false;
  };
  sub.on('close', lost);
  sub.on('end', lost);
  sub.on('message', (ch: string, message: string) => {
    if (ch === cancelChannel) {
      const now = Date.now();
      if (recentCancels.size >= CANCEL_MEMORY_MAX) {
        for (const [id, at] of recentCancels)
          if (at < now - CANCEL_MEMORY_MS || recentCancels.size >= CANCEL_MEMORY_MAX) recentCancels.delete(id);
      }
      recentCancels.set(message, now);
      for (const fn of cancel.get(message) ?? []) fn(message);
      return;
    }
    if (ch !== doneChannel) return;
    // Every process hears every notice: parse only those someone here waits for.
    const id = message.startsWith('{') ? LEADING_ID.exec(message)?.[1] : message;
    if (id !== undefined && !done.has(id)) return;
    const notice = readDone(message);
    if (!notice) return;
    for (const fn of done.get(notice.turnId) ?? []) fn(notice.turnId, notice.view);
  });
  const add = <L>(map: Map<string, Set<L>>, turnId: string, fn: L) => {
    let set = map.get(turnId);
    if (!set) map.set(turnId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (!set.size) map.delete(turnId);
    };
  };
  const bus: TurnBus = {
    onDone: (turnId, fn) => add(done, turnId, fn),
    onCancel: (turnId, fn) => add(cancel, turnId, fn),
    mark: () => (subscribed ? epoch : -1),
    heardSince: (mark) => mark >= 0 && subscribed && epoch === mark,
    cancelled(turnId) {
      const at = recentCancels.get(turnId);
      return at !== undefined && at >= Date.now() - CANCEL_MEMORY_MS;
    },
    close() {
      buses.delete(key);
      lost();
      sub.disconnect();
    },
  };
  tiedTo.once('end', () => bus.close());
  buses.set(key, bus);
  return bus;
}
