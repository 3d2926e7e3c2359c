import type { Config } from '../config.js';
import { createRedis, keyspace, type Redis } from '../redis.js';

type Listener = (turnId: string) => void;

/**
 * Redis pub/sub between API and worker processes: `done` (a turn reached a terminal status, so a
 * waiting POST can answer) and `cancel` (a later message asks the worker holding a turn to stop).
 * A lost notice only costs latency: waiters also re-read Postgres on a bounded interval, and the
 * runtime re-reads the interrupt flag before each step.
 */
export interface TurnBus {
  onDone(turnId: string, fn: Listener): () => void;
  onCancel(turnId: string, fn: Listener): () => void;
  close(): void;
}

const buses = new Map<string, TurnBus>();

const channel = (config: Config, what: 'done' | 'cancel') => `${keyspace(config.queuePrefix)}:agent:${what}`;

export async function publishDone(redis: Redis, config: Config, turnIds: string[]): Promise<void> {
  await Promise.all(turnIds.map((id) => redis.publish(channel(config, 'done'), id).catch(() => 0)));
}

export async function publishCancel(redis: Redis, config: Config, turnIds: string[]): Promise<void> {
  await Promise.all(turnIds.map((id) => redis.publish(channel(config, 'cancel'), id).catch(() => 0)));
}

/**
 * This process's subscriber (one connection, shared). It is closed with the producer connection it is
 * tied to, so a runtime's close() also ends it.
 */
export function turnBus(config: Config, tiedTo: Redis): TurnBus {
  const key = `${config.redisUrl}|${config.queuePrefix}`;
  const existing = buses.get(key);
  if (existing) return existing;
  const sub = createRedis(config.redisUrl, 'worker');
  const listeners = { done: new Map<string, Set<Listener>>(), cancel: new Map<string, Set<Listener>>() };
  const doneChannel = channel(config, 'done');
  const cancelChannel = channel(config, 'cancel');
  void sub.subscribe(doneChannel, cancelChannel).catch(() => {});
  sub.on('message', (ch: string, turnId: string) => {
    const map = ch === doneChannel ? listeners.done : ch === cancelChannel ? listeners.cancel : null;
    for (const fn of map?.get(turnId) ?? []) fn(turnId);
  });
  const add = (map: Map<string, Set<Listener>>, turnId: string, fn: Listener) => {
    let set = map.get(turnId);
    if (!set) map.set(turnId, (set = new Set()));
    set.add(fn);
    return () => {
      set.delete(fn);
      if (!set.size) map.delete(turnId);
    };
  };
  const bus: TurnBus = {
    onDone: (turnId, fn) => add(listeners.done, turnId, fn),
    onCancel: (turnId, fn) => add(listeners.cancel, turnId, fn),
    close() {
      buses.delete(key);
      sub.disconnect();
    },
  };
  tiedTo.once('end', () => bus.close());
  buses.set(key, bus);
  return bus;
}
