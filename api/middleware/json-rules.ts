import { MAX_JSON_DEPTH } from '../../src/webhooks/webhooks.types.js';

/**
 * The rules every JSON value a client sends passes at the edge, whatever its route (docs/decisions/api-edge.md):
 * - nesting: arrays and objects at most MAX_JSON_DEPTH deep, so nothing after intake (zod, the
 *   stores' JSON.stringify, the agent's data blocks) can run out of stack on it;
 * - text: Postgres text and jsonb cannot hold U+0000, and jsonb no unpaired surrogate (both legal
 *   JSON escapes), so no string a handler may store carries either.
 * Both walks are iterative: a value of any depth is measured without recursion.
 */

export const DEPTH_RULE = `must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`;
export const TEXT_RULE = 'must not contain NUL characters or unpaired surrogates';

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching U+0000 is the point (Postgres refuses it).
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when Postgres can store the string as text and in jsonb. */
export const storableText = (s: string): boolean => !UNSTORABLE.test(s);

/** True when `value` nests arrays and objects deeper than `max` (a scalar is depth 0, `[]` depth 1). */
export function deeperThan(value: unknown, max = MAX_JSON_DEPTH): boolean {
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length) {
    const { v, d } = stack.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d + 1 > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child && typeof child === 'object') stack.push({ v: child, d: d + 1 });
  }
  return false;
}

/**
 * The dotted path of the first string (or object key) in `value` Postgres cannot store, `''` for the
 * value itself, or null when every one is storable. Depth-first in document order.
 */
export function unstorablePath(value: unknown): string | null {
  const stack: { v: unknown; path: string }[] = [{ v: value, path: '' }];
  const at = (path: string, key: string) => (path ? `${path}.${key}` : key);
  while (stack.length) {
    const { v, path } = stack.pop()!;
    if (typeof v === 'string') {
      if (!storableText(v)) return path;
      continue;
    }
    if (!v || typeof v !== 'object') continue;
    const entries = Array.isArray(v) ? v.map((x, i) => [String(i), x] as const) : Object.entries(v);
    for (const [key] of entries) if (!storableText(key)) return at(path, key.replace(UNSTORABLE, '\uFFFD'));
    for (let i = entries.length - 1; i >= 0; i--) stack.push({ v: entries[i]![1], path: at(path, entries[i]![0]) });
  }
  return null;
}

/** The 400 sentence for an unstorable string at `path` of the body or query. */
export const textRuleSentence = (path: string, where: 'body' | 'query'): string => `${path || where} ${TEXT_RULE}`;

/**
 * The text rule in JSON Schema (2020-12 patterns are Unicode regular expressions, where a paired
 * surrogate is one code point): a string matching it is refused. /openapi.json puts it on every string a
 * route's schemas read as `not: { pattern }` (api/request-rules.ts).
 */
export const UNSTORABLE_PATTERN = '[\\u0000\\uD800-\\uDFFF]';
