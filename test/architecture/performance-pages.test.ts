import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorOf, mergeSections, PAGES, pageOf, previousSections } from '../../bench/pages.js';

/**
 * docs/performance.md is an index of topic pages (docs/performance/<page>.md) that `npm run bench` writes
 * (bench/run.ts, bench/pages.ts). Each benchmark's section lands on one page; a partial run keeps the rest.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The benchmark names of bench/run.ts's BENCHMARKS map (its keys, quoted or bare). */
function benchmarkNames(): string[] {
  const map = /const BENCHMARKS[^{]*\{([\s\S]*?)\n\};/.exec(read('bench/run.ts'))?.[1] ?? '';
  return [...map.matchAll(/^\s+'?([a-z0-9-]+)'?[:,]/gm)].map((m) => m[1]!);
}

describe('the performance pages', () => {
  it('give every benchmark of bench/run.ts exactly one page', () => {
    const names = benchmarkNames();
    expect(names.length).toBeGreaterThan(20);
    for (const name of names)
      expect(
        PAGES.filter((p) => p.benches.includes(name)),
        name,
      ).toHaveLength(1);
    expect(PAGES.flatMap((p) => p.benches).sort()).toEqual([...names].sort());
    expect(() => pageOf('no-such-bench')).toThrow(/on no page/);
  });

  it('are each linked from the index with every section they hold', () => {
    const index = read('docs/performance.md');
    for (const page of PAGES) {
      const sections = previousSections(read(`docs/performance/${page.file}.md`));
      expect(sections.length, page.file).toBeGreaterThan(0);
      for (const s of sections) expect(index).toContain(`](performance/${page.file}.md#${anchorOf(s.title)})`);
    }
  });

  it('keep a partial run’s other sections where they stood, its own replaced in place, a new one last', () => {
    const kept = [
      { title: 'A', body: 'old a' },
      { title: 'B', body: 'old b' },
    ];
    const measured = [
      { title: 'C', body: 'new c' },
      { title: 'A', body: 'new a' },
    ];
    expect(mergeSections(kept, measured)).toEqual([
      { title: 'A', body: 'new a' },
      { title: 'B', body: 'old b' },
      { title: 'C', body: 'new c' },
    ]);
  });
});
