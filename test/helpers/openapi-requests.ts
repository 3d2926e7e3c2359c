import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';
import { arbitraryFor, type JsonSchema } from './schema-arbitrary.js';

// ajv-formats is CommonJS: its default export is the function itself, or carries it as `default`.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;

/** One operation of /openapi.json as a client reads it: where each part's schema is and what it allows. */
export interface Operation {
  method: string;
  path: string;
  operationId: string;
  params: { name: string; in: 'path' | 'query' | 'header'; required: boolean; schema: JsonSchema }[];
  /** The JSON body's schema (absent for routes without one, or whose body is not JSON). */
  body?: { required: boolean; schema: JsonSchema };
  responses: Record<string, unknown>;
  /** The 400s that depend on stored state or the clock (`x-state-rules`): the start of each sentence. */
  stateRules?: string[];
}

/** Every operation of the description. */
export function operations(doc: JsonSchema): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Record<string, JsonSchema>>)) {
    for (const [method, op] of Object.entries(methods)) {
      const content = (op.requestBody as { content?: Record<string, { schema: JsonSchema }>; required?: boolean } | undefined) ?? undefined;
      const json = content?.content?.['application/json'];
      out.push({
        method,
        path,
        operationId: String(op.operationId),
        params: ((op.parameters ?? []) as Operation['params']).map((p) => ({ ...p, required: Boolean(p.required) })),
        ...(json ? { body: { required: Boolean(content?.required), schema: json.schema } } : {}),
        responses: op.responses as Record<string, unknown>,
        stateRules: op['x-state-rules'] as string[] | undefined,
      });
    }
  }
  return out;
}

const REF_BASE = 'urn:component:';
/** The schema with its `#/components/schemas/X` refs pointing at the components added to ajv by name. */
const linked = (schema: JsonSchema): JsonSchema =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', `"${REF_BASE}`)) as JsonSchema;

/** A validator of the description's schemas (JSON Schema 2020-12 with formats), refs into its components resolved. */
export class DescriptionValidator {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, unicodeRegExp: true });
  private readonly cache = new Map<JsonSchema, ValidateFunction>();

  constructor(readonly doc: JsonSchema) {
    addFormats(this.ajv);
    // The description's byte bounds (api/schemas.ts utf8Bound): part of what "valid by the description" means.
    this.ajv.addKeyword({
      keyword: 'x-max-utf8-bytes',
      type: 'string',
      schemaType: 'number',
      validate: (max: number, data: string) => Buffer.byteLength(data, 'utf8') <= max,
    });
    const schemas = (doc.components as { schemas?: Record<string, JsonSchema> } | undefined)?.schemas ?? {};
    for (const [name, schema] of Object.entries(schemas)) this.ajv.addSchema(linked(schema), `${REF_BASE}${name}`);
  }

  /** True when `value` is valid by `schema`. */
  valid(schema: JsonSchema, value: unknown): boolean {
    let fn = this.cache.get(schema);
    if (!fn) {
      fn = this.ajv.compile(linked(schema));
      this.cache.set(schema, fn);
    }
    return fn(value);
  }
}

/** A request drawn from an operation's description: path values, query text, headers and the JSON body. */
export interface DrawnRequest {
  path: Record<string, string>;
  query: Record<string, string>;
  headers: Record<string, string>;
  /** undefined: no body sent. */
  body?: unknown;
}

/** What a header may hold on the wire (visible ASCII and spaces, not leading or trailing). */
const HEADER_TEXT = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

/**
 * Requests valid by the operation's description, drawn by fast-check. `ids` gives values for a path
 * parameter beside those its schema allows (real ids of the account, so handlers go past the lookup).
 */
export function validRequests(op: Operation, doc: JsonSchema, ids: Record<string, string[]> = {}): fc.Arbitrary<DrawnRequest> {
  const part = (where: 'path' | 'query' | 'header') => {
    const model: Record<string, fc.Arbitrary<string>> = {};
    const required: string[] = [];
    for (const p of op.params.filter((x) => x.in === where)) {
      let value = arbitraryFor(p.schema, doc).map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      if (where === 'header') value = value.filter((v) => HEADER_TEXT.test(v));
      const known = ids[p.name];
      model[p.name] = known?.length
        ? fc.oneof({ arbitrary: fc.constantFrom(...known), weight: 4 }, { arbitrary: value, weight: 1 })
        : value;
      if (p.required || where === 'path') required.push(p.name);
    }
    return fc.record(model, { requiredKeys: required }) as fc.Arbitrary<Record<string, string>>;
  };
  const body: fc.Arbitrary<unknown> = op.body
    ? op.body.required
      ? arbitraryFor(op.body.schema, doc)
      : fc.option(arbitraryFor(op.body.schema, doc), { nil: undefined })
    : fc.constant(undefined);
  return fc.record({ path: part('path'), query: part('query'), headers: part('header'), body });
}

/** True when every part of the drawn request is valid by the description (generators cannot promise every rule). */
export function describedValid(op: Operation, v: DescriptionValidator, req: DrawnRequest): boolean {
  for (const p of op.params) {
    const raw = (p.in === 'path' ? req.path : p.in === 'query' ? req.query : req.headers)[p.name];
    if (raw === undefined) {
      if (p.required) return false;
      continue;
    }
    const type = p.schema.type;
    const value = type === 'integer' || type === 'number' ? (/^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : raw) : raw;
    if (!v.valid(p.schema, value)) return false;
  }
  if (op.body && req.body !== undefined && !v.valid(op.body.schema, req.body)) return false;
  return true;
}
