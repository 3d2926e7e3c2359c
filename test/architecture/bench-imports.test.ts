import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './source-files.js';

/**
 * The benchmarks run outside vitest (`npm run bench`), and a module that imports vitest cannot load there: one
 * such import anywhere under a bench file stops every bench. Test helpers the benches share stay free of it
 * (what needs the fixture lives in a helper of its own, as test/helpers/postfix-fixture.ts does).
 */
const IMPORT = /(?:^|\n)\s*(?:import|export)[^'";]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => (m[1] ?? m[2])!);
}

/** The repo path a relative import names (`./x.js` is the source file `x.ts`), or null when it is a package. */
function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith('.')) return null;
  const raw = join(dirname(from), spec);
  for (const candidate of [raw.replace(/\.js$/, '.ts'), raw.replace(/\.mjs$/, '.mjs'), `${raw}.ts`]) {
    if (existsSync(join(ROOT, candidate))) return relative(ROOT, join(ROOT, candidate));
  }
  return null;
}

describe('the benchmarks', () => {
  it('import nothing that imports vitest, however deep', () => {
    const benches = readdirSync(join(ROOT, 'bench'))
      .filter((f) => f.endsWith('.ts'))
      .map((f) => `bench/${f}`);
    const seen = new Map<string, string>();
    const queue = benches.map((b) => [b, b] as const);
    const offenders: string[] = [];
    while (queue.length > 0) {
      const [file, via] = queue.shift()!;
      if (seen.has(file)) continue;
      seen.set(file, via);
      for (const spec of importsOf(file)) {
        if (spec === 'vitest' || spec.startsWith('vitest/') || spec.startsWith('@vitest/')) offenders.push(`${file} (reached from ${via})`);
        const next = resolve(file, spec);
        // src/, api/ and workers/ never import vitest (the imports test keeps them to their layers); walk the rest.
        if (next && (next.startsWith('test/') || next.startsWith('bench/'))) queue.push([next, via]);
      }
    }
    expect(seen.size).toBeGreaterThan(benches.length);
    expect(offenders).toEqual([]);
  });
});
