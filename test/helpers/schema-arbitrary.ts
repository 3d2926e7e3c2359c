import fc from 'fast-check';

/** A JSON Schema node of /openapi.json (OpenAPI 3.1: JSON Schema 2020-12 with `#/components/schemas/*` refs). */
export type JsonSchema = Record<string, unknown>;

/** How deep generated values nest before optional parts are left out (keeps requests small). */
const MAX_DEPTH = 4;
/** Above this many items or characters a value is drawn near its bounds only (requests stay small). */
const SPAN = 24;

function resolve(schema: JsonSchema, doc: JsonSchema): JsonSchema {
  const ref = schema.$ref;
  if (typeof ref !== 'string') return schema;
  const name = ref.replace('#/components/schemas/', '');
  const found = (doc as { components?: { schemas?: Record<string, JsonSchema> } }).components?.schemas?.[name];
  if (!found) throw new Error(`unresolved ${ref}`);
  return resolve(found, doc);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  const min = num(s.minLength) ?? 0;
  const max = num(s.maxLength);
  const top = Math.min(max ?? min + SPAN, min + SPAN);
  const maxBytes = num(s['x-max-utf8-bytes']);
  const lengthOk = (v: string) =>
    [...v].length >= min && (max === undefined || [...v].length <= max) && (maxBytes === undefined || Buffer.byteLength(v) <= maxBytes);
  const pattern = typeof s.pattern === 'string' ? new RegExp(s.pattern, 'u') : null;
  // A pattern that only forbids some characters (the edge's text rule) is met by filtering; others are drawn from.
  if (pattern && !/^\^\[\^[^\]]*\]\*\$$/.test(s.pattern as string)) {
    return fc.stringMatching(pattern, { size: 'small' }).filter(lengthOk);
  }
  // Lengths count code points, as JSON Schema does: ASCII, any code point, and (short) whole graphemes.
  const sized = (lo: number, hi: number) =>
    fc.oneof(
      fc.string({ minLength: lo, maxLength: hi }),
      fc.string({ unit: 'binary', minLength: lo, maxLength: hi }),
      ...(hi <= SPAN ? [fc.string({ unit: 'grapheme', minLength: lo, maxLength: hi }).filter(lengthOk)] : []),
    );
  // Near the top bound too: a description's maxLength must be what the service takes.
  // With a byte bound, the top is also drawn as plain ASCII (one byte each) and longer text is filtered by bytes.
  const atTop = maxBytes === undefined ? sized(max ?? 0, max ?? 0) : fc.string({ minLength: max ?? 0, maxLength: max ?? 0 });
  const drawn = (max !== undefined && max > top ? fc.oneof(sized(min, top), atTop) : sized(min, top)).filter(lengthOk);
  return pattern ? drawn.filter((v) => pattern.test(v)) : drawn;
}

function integerArb(s: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const exMin = num(s.exclusiveMinimum);
  const exMax = num(s.exclusiveMaximum);
  const min = num(s.minimum) ?? (exMin === undefined ? undefined : exMin + 1);
  const max = num(s.maximum) ?? (exMax === undefined ? undefined : exMax - 1);
  const lo = Math.max(min ?? Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER);
  const hi = Math.min(max ?? Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER);
  const ints = fc.oneof(fc.integer({ min: lo, max: hi }), fc.constantFrom(lo, hi));
  if (integer) return ints;
  return fc.oneof(ints, fc.double({ min: lo, max: hi, noNaN: true, noDefaultInfinity: true }));
}

function objectArb(s: JsonSchema, doc: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((s.required ?? []) as string[]);
  const keys = Object.keys(props).filter((k) => required.has(k) || depth < MAX_DEPTH);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const k of keys) model[k] = arbitraryFor(props[k]!, doc, depth + 1);
  return fc.record(model, { requiredKeys: keys.filter((k) => required.has(k)) }) as fc.Arbitrary<Record<string, unknown>>;
}

function arrayArb(s: JsonSchema, doc: JsonSchema, depth: number): fc.Arbitrary<unknown[]> {
  const min = num(s.minItems) ?? 0;
  const max = Math.min(num(s.maxItems) ?? min + 4, min + (depth < MAX_DEPTH ? 4 : 0));
  const item = s.items ? arbitraryFor(s.items as JsonSchema, doc, depth + 1) : fc.jsonValue({ maxDepth: 1 });
  return fc.array(item, { minLength: min, maxLength: Math.max(min, max) });
}

function typedArb(type: string, s: JsonSchema, doc: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case 'string':
      return stringArb(s);
    case 'integer':
      return integerArb(s, true);
    case 'number':
      return integerArb(s, false);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'object':
      return objectArb(s, doc, depth);
    case 'array':
      return arrayArb(s, doc, depth);
    default:
      throw new Error(`no generator for type ${type}`);
  }
}

/**
 * Values a JSON Schema of /openapi.json allows, drawn by fast-check (so a seed replays them). Mostly valid
 * by construction; what a generator cannot promise (a pattern beside a length, `oneOf` overlaps) the caller
 * checks with a validator and skips. An empty schema is any JSON value.
 */
export function arbitraryFor(schema: JsonSchema, doc: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, doc);
  if ('const' in s) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  const choices = (s.anyOf ?? s.oneOf) as JsonSchema[] | undefined;
  if (choices) return fc.oneof(...choices.map((c) => arbitraryFor(c, doc, depth)));
  if (Array.isArray(s.type)) return fc.oneof(...(s.type as string[]).map((t) => typedArb(t, s, doc, depth)));
  if (typeof s.type === 'string') return typedArb(s.type, s, doc, depth);
  if (s.properties) return objectArb(s, doc, depth);
  return fc.jsonValue({ maxDepth: 2 });
}
