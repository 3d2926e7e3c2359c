import type { Config } from '../config.js';
import type { Db } from '../db.js';
import type { QueueSet } from '../jobs/contract.js';
import type { Logger } from '../logger.js';

/** Who made a decision: a person (through a door: the API, the dashboard), the trust ladder, or an account setting. */
export type DecidedBy = 'person' | 'trust_ladder' | 'setting';

/** Who wrote, for the audit rows a follow-up writes (the shape of src/audit's Actor). */
export interface EventActor {
  accountId: string;
  actor: 'api' | 'admin' | 'person';
  tokenId: string | null;
  tokenLabel: string | null;
  method: string;
  route: string;
  personId?: string | null;
  personEmail?: string | null;
}

/**
 * `card.decided`: a card left the queue by a decision. `approve` (answer's approve, or a ladder's or setting's
 * auto-resolve), `answer`, `choose`, `send` (a mail card) or `dismiss`. Written in the decision's transaction
 * (src/review/, src/shipping/), so it exists exactly when the decision committed. `payload` is the card's as
 * decided (an experiment's id and value, a workflow's id).
 */
export interface CardDecided {
  accountId: string;
  cardId: string;
  kind: string;
  sourceType: string;
  decision: 'approve' | 'answer' | 'choose' | 'send' | 'dismiss';
  decidedBy: DecidedBy;
  /** The person's token (for the audit rows of what follows), or null for the ladder and settings. */
  actor: EventActor | null;
  payload: Record<string, unknown>;
  at: number;
}

/**
 * The events one area reports and other areas act on, by name: the one map from an event's name to its payload.
 * A new event adds its line here; its emitter records it with `recordEvent`, and each area that cares registers a
 * handler with `EventHandlers.on`.
 */
export interface EventMap {
  'card.decided': CardDecided;
}

export type EventName = keyof EventMap;

/** What a handler runs with: a worker's connections. */
export interface EventDeps {
  config: Config;
  logger: Logger;
  db: Db;
  queues: QueueSet;
}

/** One area's handler of an event. It runs at least once per event, so a second run must change nothing. */
export type EventHandler<N extends EventName> = (deps: EventDeps, payload: EventMap[N]) => Promise<void>;

interface Registered {
  area: string;
  handle: EventHandler<EventName>;
}

/**
 * The handlers of a process, by event. Each area that cares registers its own (`registerWorkflowFollowUps`, …) on
 * a registry the process makes at start and passes to the delivery (workers/event-handlers.ts); nothing registers
 * when a module loads. `area` names the handler in the outbox row's `handled` list, so it must never change.
 */
export class EventHandlers {
  private readonly byName = new Map<EventName, Registered[]>();

  on<N extends EventName>(name: N, area: string, handle: EventHandler<N>): this {
    const list = this.byName.get(name) ?? [];
    if (list.some((r) => r.area === area)) throw new Error(`${area} already handles ${name}`);
    list.push({ area, handle: handle as EventHandler<EventName> });
    this.byName.set(name, list);
    return this;
  }

  /** The handlers of `name`, in the order they were registered. */
  of(name: string): readonly Registered[] {
    return this.byName.get(name as EventName) ?? [];
  }
}
