/**
 * A budget of bytes held at once, handed out first come, first served: a holder waits until its bytes
 * fit beside the others' (one larger than the whole budget goes alone). Bounds the received mail a
 * process parses at the same time, however many messages are in flight.
 */
export function createByteBudget(budget: number) {
  let used = 0;
  const waiting: { n: number; go: () => void }[] = [];
  const pump = () => {
    while (waiting.length && (used === 0 || used + waiting[0]!.n <= budget)) {
      const w = waiting.shift()!;
      used += w.n;
      w.go();
    }
  };
  return {
    async hold<T>(n: number, fn: () => Promise<T>): Promise<T> {
      await new Promise<void>((go) => {
        waiting.push({ n, go });
        pump();
      });
      try {
        return await fn();
      } finally {
        used -= n;
        pump();
      }
    },
    /** Bytes held now (tests). */
    get used() {
      return used;
    },
  };
}
