import type { QueueVersion } from '../src/queue-version/keys.js';

/** Thrown into a GET handler begun beside the limiter when its call was refused: its work is dropped. */
export class Dropped extends Error {
  constructor() {
    super('the limiter refused this call; work begun beside it is dropped');
  }
}

/**
 * The limiter's decision, as seen by a GET handler begun beside it. The handler may read at once, but
 * awaits `beforeWrite` before any write: it resolves once the call is admitted and rejects (`Dropped`)
 * when the call is refused, so a refused or revoked caller never causes a write. The router answers
 * only after dropped work has settled, so no request's work outlives its answer.
 */
export class Admission {
  private work: Promise<unknown> | undefined;
  private readonly decision: Promise<void>;
  private settle!: { admit: () => void; refuse: (err: Error) => void };
  private readonly version: Promise<QueueVersion | null>;
  private settleVersion!: (v: QueueVersion | null) => void;

  constructor() {
    this.decision = new Promise<void>((admit, refuse) => (this.settle = { admit, refuse }));
    this.version = new Promise((resolve) => (this.settleVersion = resolve));
    // Read only by begun work; a refusal nobody waits on is not an unhandled rejection.
    this.decision.catch(() => {});
  }

  /** For a handler that starts only once admitted: nothing to wait for. */
  static readonly open = (): Promise<void> => Promise.resolve();

  readonly beforeWrite = (): Promise<void> => this.decision;

  /** The account's queue version the limiter reported for the admitted call; null once refused. */
  readonly queueVersion = (): Promise<QueueVersion | null> => this.version;

  /** Work begun before the decision; its outcome is read by the router, or not at all. */
  begin<T>(work: Promise<T>): Promise<T> {
    this.work = work;
    work.catch(() => {});
    return work;
  }

  admit(queue: QueueVersion): void {
    this.settle.admit();
    this.settleVersion(queue);
  }

  /** Refuses the begun work's writes (idempotent); resolves once that work has stopped. */
  async refuse(): Promise<void> {
    this.settleVersion(null);
    if (!this.work) return;
    this.settle.refuse(new Dropped());
    await this.work.catch(() => {});
  }
}
