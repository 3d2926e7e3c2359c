import { describe, expect, it } from 'vitest';
import { createByteBudget } from '../../src/inbound/byte-budget.js';

/** Lets every callback already due run (the budget is in memory: what a release lets in runs by then). */
const tick = () => new Promise((r) => setImmediate(r));

describe('the byte budget of messages parsed at once', () => {
  it('lets holders in while their bytes fit, first come first served, and one larger than the budget alone', async () => {
    const budget = createByteBudget(100);
    const order: string[] = [];
    const gates = new Map<string, () => void>();
    const hold = (name: string, n: number) =>
      budget.hold(n, async () => {
        order.push(`in ${name}`);
        await new Promise<void>((r) => gates.set(name, r));
        order.push(`out ${name}`);
      });
    const a = hold('a', 60);
    const b = hold('b', 30);
    const c = hold('c', 50); // waits: 60 + 30 + 50 > 100
    const d = hold('d', 5); // waits behind c (first come, first served)
    await tick();
    expect(order).toEqual(['in a', 'in b']);
    expect(budget.used).toBe(90);
    gates.get('a')!();
    await tick();
    expect(order).toEqual(['in a', 'in b', 'out a', 'in c', 'in d']);
    gates.get('b')!();
    gates.get('c')!();
    gates.get('d')!();
    await Promise.all([a, b, c, d]);
    expect(budget.used).toBe(0);

    const big = hold('big', 500);
    await tick();
    expect(order.at(-1)).toBe('in big');
    gates.get('big')!();
    await big;
    expect(budget.used).toBe(0);
  });

  it('gives the bytes back when the holder throws', async () => {
    const budget = createByteBudget(10);
    await expect(budget.hold(10, () => Promise.reject(new Error('parse failed')))).rejects.toThrow('parse failed');
    expect(budget.used).toBe(0);
    await expect(budget.hold(10, async () => 'ok')).resolves.toBe('ok');
  });
});
