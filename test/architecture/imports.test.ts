import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, sourceFiles } from './source-files.js';

/**
 * The shape of the code, read from its import lines (docs/decisions/code-structure.md, "Areas and their layers").
 * An area is a folder of src/ (`src/review/` is `review`); a file directly in src/ is its own area,
 * named after the file (`src/db.ts` is `db`). api/ and workers/ are areas of their own. A folder in
 * NESTED_AREAS is an area of its own inside its parent's folder (`src/review/cards/` is `review/cards`).
 */

/** Lowest first. An area imports only areas of its own layer or below, and no two areas import each other, even through others. */
const LAYERS: readonly (readonly string[])[] = [
  // queue-version: the review queue's version in Redis, bumped by card writes and read by the limiter.
  [
    'config',
    'env-rules',
    'db',
    'redis',
    // live-registry: the Redis registry of live secret hashes that public doors consult before Postgres (hook tokens, inbound URLs).
    'live-registry',
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
    // statistics: the numbers of experiments (assignment hashing, power, plan, stopping rule, intervals, wording of
    // figures), pure: no table, no clock, no other area.
    'statistics',
    // events: the typed map of cross-area events, their outbox and its delivery; the areas that care register handlers.
    'events',
  ],
  // memory: the agent's notes, read by the private-text check wherever work leaves and written by the agent and dismissals.
  ['accounts', 'audit', 'results', 'secrets', 'memory'],
  // Tracked links and visits are made by mail and by published posts.
  ['tokens', 'blocklist', 'measurement'],
  ['leads', 'rate-limit', 'deps', 'content'],
  // Work ships through channels, and channels through mail's transports.
  ['mail', 'channels'],
  // A card and its storage: the one writer of review_cards.
  ['review/cards'],
  // A person's verbs on cards, the queue's reads, timers, trust and approval: they decide, and never ship.
  ['review'],
  // The shipping path: what was approved is fenced, shipped through its channel and reconciled.
  ['shipping'],
  // experiments: a feature area on the shipping path, content and measurement: its tables, each kind of variant's reads
  // (counts, assignment, exposure) and its adapter, which the composition roots register into the channel registry
  // as they hand shipping its hold rule and the scoreboard, visits and posts their experiment readers. Nothing below
  // imports it; the agent's experiment tools (src/agent/experiments/) stand on it.
  ['experiments'],
  // results/report: the `/results` scoreboard, read through each owner's repository or door (the agent's read_results asks it).
  ['results/report'],
  // The agent, in sub-areas (src/agent/<sub-area>/), lowest first: what a turn is and where turns are kept; the
  // replies that wake it; its tools (one file per tool, in a registry the process assembles); the two brains; the
  // runner that turns proposals into steps; a person's messages and the agent's experiments on top.
  ['agent/core'],
  ['agent/replies'],
  ['agent/tools'],
  ['agent/brains/offline', 'agent/brains/llm'],
  ['agent/turns'],
  ['agent/messages', 'agent/experiments'],
  ['webhooks', 'workflows', 'inbound'],
  // Retention removes every area's expired history (finished cards through the card area's door).
  ['retention'],
  ['admin'],
  // The two entry points stand on src/ and never import each other (checked below).
  ['api', 'workers'],
];

/** Folders inside an area's folder that are areas of their own. */
const NESTED_AREAS = [
  'src/review/cards/',
  'src/results/report/',
  'src/agent/core/',
  'src/agent/replies/',
  'src/agent/tools/',
  'src/agent/brains/offline/',
  'src/agent/brains/llm/',
  'src/agent/turns/',
  'src/agent/messages/',
  'src/agent/experiments/',
];
/** The card area: the only files that touch the review_cards table. */
const CARDS = 'src/review/cards/';
const CARD_REPOSITORY = join('src', 'review', 'cards', 'cards.repository.ts');
/**
 * Areas besides the card area that move cards through the card repository's guarded writes: the review
 * verbs and timers, and the shipping path (claim, settle, release). Every other area uses the card
 * area's doors (src/review/cards/doors.ts) or review's services.
 */
const CARD_REPOSITORY_ALLOWED = new Set<string>(['review', 'shipping']);
const WRITES_CARDS = /\b(?:insert\s+into|update|delete\s+from)\s+review_cards\b|review_cards['"]\s*\)\s*\.\s*(?:insert|update|del)\b/i;

function areaOf(file: string): string {
  const nested = NESTED_AREAS.find((n) => file.startsWith(n));
  if (nested) return nested.slice('src/'.length, -1);
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

/** Strongly connected groups of more than one node (Tarjan) of a graph given as each node's successors: each is a cycle. */
function stronglyConnected(next: Map<string, string[]>): string[][] {
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

/** Import cycles between areas. */
function cycles(): string[][] {
  const next = new Map<string, string[]>();
  for (const key of arrows.keys()) {
    const [a, b] = key.split(' -> ') as [string, string];
    next.set(a, [...(next.get(a) ?? []), b]);
  }
  return stronglyConnected(next);
}

/** Import cycles between files (inside an area too), each as its files with what each imports of the others. */
function fileCycles(): string[][] {
  const known = new Set(files);
  const next = new Map(files.map((f) => [f, importsOf(f, texts.get(f)!).filter((t) => known.has(t))]));
  return stronglyConnected(next).map((group) =>
    group.map((f) => `${f} imports ${[...new Set(next.get(f)!.filter((t) => group.includes(t)))].join(', ')}`),
  );
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
    expect(arrows.get('agent/tools -> review')?.size).toBeGreaterThan(0);
    expect(arrows.get('workers -> review')?.size).toBeGreaterThan(0);
  });

  it('places every area in a layer', () => {
    const areas = new Set(files.map(areaOf));
    expect([...areas].filter((a) => !layerOf.has(a))).toEqual([]);
  });

  it('has no import cycle between areas', () => {
    expect(cycles().map(cycleArrows)).toEqual([]);
  });

  it('has no import cycle between files, inside an area either', () => {
    expect(fileCycles()).toEqual([]);
  });

  it('keeps src/statistics pure: it imports no other area, and every agent file is in a sub-area', () => {
    const out = [...arrows.entries()]
      .filter(([key]) => key.startsWith('statistics -> '))
      .map(([key, why]) => `${key}: ${[...why].join('; ')}`);
    expect(out).toEqual([]);
    expect(files.filter((f) => areaOf(f) === 'agent')).toEqual([]);
  });

  it('is the layer table of docs/architecture.md, row for row', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const rows = [...doc.matchAll(/^\| (\d+)\s+\| ([^|]+)\|/gm)].map((m) => [...m[2]!.matchAll(/`([^`]+)`/g)].map((n) => n[1]));
    expect(rows).toEqual(LAYERS.map((row) => [...row]));
  });

  it('never ships from the review verbs: src/review/ (outside its cards area) imports nothing of src/shipping/', () => {
    const shipping = files
      .filter((f) => areaOf(f) === 'review')
      .flatMap((f) =>
        importsOf(f, texts.get(f)!)
          .filter((t) => t.startsWith('src/shipping/'))
          .map((t) => `${f} imports ${t}`),
      );
    expect(shipping).toEqual([]);
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

  it('names review cards only in src/review/cards/, and moves them through its repository only from review and shipping', () => {
    const outside = files.filter((f) => !f.startsWith(CARDS));
    const table = outside.filter((f) => {
      const code = texts.get(f)!.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      return /\breview_cards\b/.test(code);
    });
    const repository = outside.filter(
      (f) => !CARD_REPOSITORY_ALLOWED.has(areaOf(f)) && importsOf(f, texts.get(f)!).some((t) => t === CARD_REPOSITORY),
    );
    expect({ table, repository }).toEqual({ table: [], repository: [] });
  });

  it('writes review cards only in the card repository, whose writes bump the queue version', () => {
    const strip = (f: string) => texts.get(f)!.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
    const writers = files.filter((f) => WRITES_CARDS.test(strip(f)));
    expect(writers).toEqual([CARD_REPOSITORY]);
    // Its two writes (insert, conditional update) each run through cardWrite (src/queue-version/card-writes.ts).
    const code = strip(CARD_REPOSITORY);
    expect(code.match(/\.(?:insert|update)\(/g)).toHaveLength(2);
    expect(code).toMatch(/insert: \(c: NewCard\): Promise<Card> => cardWrite\(q, c\.accountId, \(\) => insertCard\(q, c\)\)/);
    expect(code).toMatch(/cardWrite\(q, accountId, \(\) => transitionCard\(q, accountId, id, guard, changes, at\)\)/);
  });
});
