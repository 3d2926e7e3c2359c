import { UNSTORABLE_PATTERN } from './middleware/json-rules.js';
import type { RouteDef } from './route-def.js';

/** The body limit of a route that reads JSON and names no other (body-parser's `limit`). */
export const DEFAULT_JSON_LIMIT = 1024 * 1024;

type Node = Record<string, unknown>;
const REFUSED = { pattern: UNSTORABLE_PATTERN };

/**
 * Writes the edge's text rule (api/middleware/json-rules.ts) into the description: every string of a
 * parsed JSON body or query, and every free object key, carries `not: { pattern }` for NUL and unpaired
 * surrogates, which the router answers 400. Bodies a handler reads itself (webhooks, received mail) keep
 * their text as sent, so theirs are left alone. Components reached from them are marked once.
 */
export function describeTextRule<D extends object>(doc: D, routes: RouteDef[]): D {
  const components = ((doc as Node).components as { schemas?: Record<string, Node> } | undefined)?.schemas ?? {};
  const seen = new Set<Node>();
  const mark = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node as Node)) return;
    const s = node as Node;
    seen.add(s);
    if (typeof s.$ref === 'string') mark(components[s.$ref.replace('#/components/schemas/', '')]);
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes('string') && !('enum' in s) && !('const' in s) && !s.not) s.not = REFUSED;
    // Keys of a record survive parsing (a plain object's unknown keys are dropped, never refused).
    if (types.includes('object') && typeof s.additionalProperties === 'object' && !s.propertyNames) s.propertyNames = { not: REFUSED };
    for (const v of Object.values(s.properties ?? {})) mark(v);
    for (const key of ['items', 'additionalProperties', 'then', 'else', 'if'] as const) mark(s[key]);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) for (const v of (s[key] as unknown[] | undefined) ?? []) mark(v);
  };
  const paths = (doc as Node).paths as Record<string, Record<string, Node>>;
  for (const route of routes) {
    const op = paths[route.path]?.[route.method];
    if (!op) continue;
    if (route.query) for (const p of (op.parameters ?? []) as Node[]) if (p.in === 'query') mark(p.schema);
    if (route.body) mark((op.requestBody as { content?: Record<string, Node> } | undefined)?.content?.['application/json']?.schema);
  }
  return doc;
}
