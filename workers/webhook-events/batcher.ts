/**
 * Group commit for a worker's concurrent jobs: each job submits its key and waits; keys that arrive
 * while `maxInFlight` batches are already running are gathered and run together as the next batch
 * (at most `maxBatch` keys). Nothing waits for a timer: with one job at a time every batch has one key.
 * When a batch fails as a whole, its keys are run one by one, so one bad key fails only its own job.
 */
export type BatchRun<R> = (keys: string[]) => Promise<Map<string, R | Error>>;

export interface Batcher<R> {
  submit(key: string): Promise<R>;
}

export function createBatcher<R>(run: BatchRun<R>, opts: { maxBatch: number; maxInFlight: number }): Batcher<R> {
  type Waiter = { key: string; resolve: (r: R) => void; reject: (e: Error) => void };
  let pending: Waiter[] = [];
  let inFlight = 0;

  const settle = (waiters: Waiter[], answers: Map<string, R | Error>) => {
    for (const w of waiters) {
      const a = answers.get(w.key);
      if (a === undefined) w.reject(new Error(`no answer for ${w.key}`));
      else if (a instanceof Error) w.reject(a);
      else w.resolve(a);
    }
  };

  async function runBatch(waiters: Waiter[]): Promise<void> {
    const keys = [...new Set(waiters.map((w) => w.key))];
    try {
      settle(waiters, await run(keys));
    } catch (err) {
      if (keys.length === 1) for (const w of waiters) w.reject(err as Error);
      else {
        await Promise.all(
          keys.map(async (key) => {
            const mine = waiters.filter((w) => w.key === key);
            try {
              settle(mine, await run([key]));
            } catch (e) {
              for (const w of mine) w.reject(e as Error);
            }
          }),
        );
      }
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
    submit(key) {
      return new Promise<R>((resolve, reject) => {
        pending.push({ key, resolve, reject });
        pump();
      });
    },
  };
}
