import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the code, read from its import lines (docs/decisions.md, "Areas and their layers").
 * An area is a folder of src/ (`src/review/` is `review`); a file directly in src/ is its own area,
 * named after the file (`src/db.ts` is `db`). api/ and workers/ are areas of their own.
 */
const ROOT = join(import.meta.dirname, '..', '..');

/** Lowest first. An area imports only areas of its own layer or below, and no two areas import each other, even through others. */
const LAYERS: readonly (readonly string[])[] = [
  // queue-version: the review queue's version in Redis, bumped by card writes and read by the limiter.
  [
    'config',
    'env-rules',
    'db',
    'redis',
    'errors',
    'ids',
    'logger',
    'preflight',
    'cursor',
    'jobs',
    'batcher',
    'node-version',
    'queue-version',
    // metrics: the process's one Prometheus registry; domain code at every layer counts through it.
    'metrics',
    // tracing: the process's OpenTelemetry provider and the span helpers every layer traces through.
    'tracing',
    // experiments: the statistics of agent-run experiments (assignment, power, stopping rule), pure and self-contained.
    'experiments',
  ],
  ['accounts', 'audit', 'results', 'secrets'],
  // Tracked links and visits are made by mail and by published posts.
  ['tokens', 'blocklist', 'measurement'],
  ['leads', 'rate-limit', 'deps', 'content'],
  // The shipping path: review ships work through channels, and channels through mail's transports.
  ['mail', 'channels'],
  ['review'],
  ['agent'],
  ['webhooks', 'workflows', 'inbound'],
  ['admin'],
  // The two entry points stand on src/ and never import each other (checked below).
  ['api', 'workers'],
];

/** Files outside src/review/ still allowed to write cards through the card repository: none (the shipping path moved into src/review/). */
const CARD_REPOSITORY_ALLOWED = new Set<string>([]);
/** Files outside src/review/ that may read the review_cards table, never write it: `/results` `harness` counts cards. */
const CARD_TABLE_READERS = new Set<string>(['src/results/harness.repository.ts']);
const WRITES_CARDS = /\b(?:insert\s+into|update|delete\s+from)\s+review_cards\b|review_cards['"]\s*\)\s*\.\s*(?:insert|update|del)\b/i;

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const rel = join(dir, e.name);
      if (e.isDirectory()) walk(rel);
      else if (rel.endsWith('.ts')) out.push(rel);
    }
  };
  for (const top of ['src', 'api', 'workers']) walk(top);
  return out.sort();
}

function areaOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'src') return parts[0]!;
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '');
}

/** Every relative module a file imports or re-exports (static, side-effect or dynamic), as a repo path. */
function importsOf(file: string, text: string): string[] {
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm),
    ...text.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specs.filter((s) => s.startsWith('.')).map((s) => normalize(join(dirname(file), s)).replace(/\.js$/, '.ts'));
}

const files = sourceFiles();
const texts = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
const arrows = new Map<string, Set<string>>(); // "from -> to" → the files that make it
for (const f of files) {
  for (const target of importsOf(f, texts.get(f)!)) {
    const [a, b] = [areaOf(f), areaOf(relative('.', target))];
    if (a === b) continue;
    const key = `${a} -> ${b}`;
    if (!arrows.has(key)) arrows.set(key, new Set());
    arrows.get(key)!.add(`${f} imports ${target}`);
  }
}
const layerOf = new Map(LAYERS.flatMap((areas, i) => areas.map((a) => [a, i] as const)));

/** Strongly connected groups of more than one area (Tarjan): each is an import cycle. */
function cycles(): string[][] {
  const next = new Map<string, string[]>();
  for (const key of arrows.keys()) {
    const [a, b] = key.split(' -> ') as [string, string];
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  let counter = 0;
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) out.push(group.sort());
    }
  };
  for (const v of [...next.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/** The arrows that close a cycle, with the files that make them, so a failure says where to look. */
function cycleArrows(group: string[]): string[] {
  return [...arrows.entries()]
    .filter(([key]) => {
      const [a, b] = key.split(' -> ') as [string, string];
      return group.includes(a) && group.includes(b);
    })
    .map(([key, why]) => `${key}: ${[...why].join('; ')}`);
}

describe('the import graph', () => {
  it('finds the areas and their arrows (the parser sees the code)', () => {
    expect(files.length).toBeGreaterThan(50);
    expect(arrows.get('agent -> review')?.size).toBeGreaterThan(0);
    expect(arrows.get('workers -> review')?.size).toBeGreaterThan(0);
  });

  it('places every area in a layer', () => {
    const areas = new Set(files.map(areaOf));
    expect([...areas].filter((a) => !layerOf.has(a))).toEqual([]);
  });

  it('has no import cycle between areas', () => {
    expect(cycles().map(cycleArrows)).toEqual([]);
  });

  it('has no arrow from a lower area up to a higher one, and api/ and workers/ never import each other', () => {
    const up = [...arrows.entries()]
      .filter(([key]) => {
        const [a, b] = key.split(' -> ') as [string, string];
        const entryPoints = (a === 'api' || a === 'workers') && (b === 'api' || b === 'workers');
        return entryPoints || layerOf.get(b)! > layerOf.get(a)!;
      })
      .map(([key, why]) => `${key}: ${[...why].join('; ')}`);
    expect(up).toEqual([]);
  });

  it('writes review cards only from src/review/', () => {
    const outside = files.filter((f) => !f.startsWith('src/review/'));
    const table = outside.filter((f) => {
      const code = texts.get(f)!.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      return /\breview_cards\b/.test(code) && (!CARD_TABLE_READERS.has(f) || WRITES_CARDS.test(code));
    });
    const repository = outside.filter(
      (f) => !CARD_REPOSITORY_ALLOWED.has(f) && importsOf(f, texts.get(f)!).some((t) => t === join('src', 'review', 'cards.repository.ts')),
    );
    expect({ table, repository }).toEqual({ table: [], repository: [] });
  });

  it('writes review cards only in the card repository, whose writes bump the queue version', () => {
    const strip = (f: string) => texts.get(f)!.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    const writers = files.filter((f) => WRITES_CARDS.test(strip(f)));
    expect(writers).toEqual(['src/review/cards.repository.ts']);
    // Its two writes (insert, conditional update) each run through cardWrite (src/queue-version/card-writes.ts).
    const code = strip('src/review/cards.repository.ts');
    expect(code.match(/\.(?:insert|update)\(/g)).toHaveLength(2);
    expect(code).toMatch(/insert: \(c: NewCard\): Promise<Card> => cardWrite\(q, c\.accountId, \(\) => insertCard\(q, c\)\)/);
    expect(code).toMatch(/cardWrite\(q, accountId, \(\) => transitionCard\(q, accountId, id, guard, changes, at\)\)/);
  });
});
