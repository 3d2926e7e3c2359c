/**
 * Group commit: callers submit one item each and wait; items that arrive while `maxInFlight` batches
 * are already running are gathered and run together as the next batch (at most `maxBatch` items).
 * Nothing waits for a timer: a lone caller runs at once, as a batch of one. `run` answers each item
 * (by position) with its result or the Error that is only that item's. When a batch fails as a whole,
 * its items are run again one by one (so one bad item cannot fail the others), unless `retrySingly`
 * is false (for a `run` that is not safe to repeat): then they all fail with its error.
 */
export type BatchRun<T, R> = (items: T[]) => Promise<(R | Error)[]>;

export interface Batcher<T, R> {
  submit(item: T): Promise<R>;
}

export function createBatcher<T, R>(
  run: BatchRun<T, R>,
  opts: { maxBatch: number; maxInFlight: number; retrySingly?: boolean },
): Batcher<T, R> {
  type Waiter = { item: T; resolve: (r: R) => void; reject: (e: Error) => void };
  let pending: Waiter[] = [];
  let inFlight = 0;

  const settle = (waiters: Waiter[], answers: (R | Error)[]) =>
    waiters.forEach((w, i) => {
      const a = answers[i];
      if (a instanceof Error) w.reject(a);
      else if (i >= answers.length) w.reject(new Error('the batch gave no answer for this item'));
      else w.resolve(a as R);
    });

  async function runBatch(waiters: Waiter[]): Promise<void> {
    try {
      settle(waiters, await run(waiters.map((w) => w.item)));
    } catch (err) {
      if (waiters.length === 1 || opts.retrySingly === false) for (const w of waiters) w.reject(err as Error);
      else
        await Promise.all(
          waiters.map(async (w) => {
            try {
              settle([w], await run([w.item]));
            } catch (e) {
              w.reject(e as Error);
            }
          }),
        );
    }
  }

  function pump(): void {
    while (inFlight < opts.maxInFlight && pending.length) {
      const batch = pending.slice(0, opts.maxBatch);
      pending = pending.slice(batch.length);
      inFlight++;
      void runBatch(batch).finally(() => {
        inFlight--;
        pump();
      });
    }
  }

  return {
    submit(item) {
      return new Promise<R>((resolve, reject) => {
        pending.push({ item, resolve, reject });
        pump();
      });
    },
  };
}
