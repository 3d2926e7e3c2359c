import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineRoute, type Responses, type RouteDef } from '../../api/route-def.js';
import { IdParams } from '../../api/schemas.js';

/**
 * What defineRoute checks at compile time (`tsc --noEmit`, run by `npm test`): each
 * `@ts-expect-error` below must be an error, or the type check fails. The handlers never run.
 */
const spec = {
  method: 'post',
  path: '/api/v1/_types/{id}',
  operationId: 'typesCheck',
  summary: 'types',
  scope: null,
  bucket: 'writes',
} as const;
const Made = z.object({ ok: z.literal(true), id: z.string(), state: z.enum(['new', 'old']) });
const Queued = z.object({ queued: z.number().int() });
const Body = z.object({ n: z.string().transform(Number) });
const made = { 201: { description: 'made', schema: Made } };
const madeOrQueued = { 201: { description: 'made', schema: Made }, 202: { description: 'later', schema: Queued } };
const plain = { 200: { description: 'made', schema: Made } };
const feedOr304 = { 200: { description: 'feed', schema: z.string(), contentType: 'application/atom+xml' }, 304: { description: 'same' } };
const route = <R extends Responses>(responses: R) => defineRoute({ ...spec, responses });

const declared: RouteDef[] = [
  // Input from the schemas (a transform's output), literals kept in the reply, status picks the schema.
  defineRoute({ ...spec, params: IdParams, body: Body, responses: madeOrQueued }).handle(async ({ params, body }) => {
    if (body.n > 1) return { status: 201, body: { ok: true, id: params.id, state: 'new' } };
    return { status: 202, body: { queued: body.n } };
  }),
  // A store-rendered reply is text; the router checks it at run time (CHECK_RESPONSES).
  route(plain).handle(async () => ({ json: '{}' })),
  // @ts-expect-error the body does not match the 201 schema (state is not one of its values)
  route(made).handle(async () => ({ status: 201, body: { ok: true, id: 'x', state: 'gone' } })),
  // @ts-expect-error 202's body is Queued, not Made
  route(madeOrQueued).handle(async () => ({ status: 202, body: { ok: true, id: 'x', state: 'new' } })),
  // @ts-expect-error leaving the status out means 200, which this route does not declare
  route(made).handle(async () => ({ body: { ok: true, id: 'x', state: 'new' } })),
  // @ts-expect-error 204 is not among the declared responses
  route(plain).handle(async () => ({ status: 204, body: { ok: true, id: 'x', state: 'new' } })),
  // @ts-expect-error a reply is a body or rendered text, not both
  route(plain).handle(async () => ({ body: { ok: true, id: 'x', state: 'new' }, json: '{}' })),
  // A declared media type is replied as text; a response declared without a schema (304) has no body.
  route(feedOr304).handle(async () => ({ text: '<feed/>' })),
  route(feedOr304).handle(async () => ({ status: 304, headers: { ETag: '"x"' } })),
  // @ts-expect-error a text response is text, not a JSON body
  route(feedOr304).handle(async () => ({ body: '<feed/>' })),
  // @ts-expect-error a response declared without a schema has no body
  route(feedOr304).handle(async () => ({ status: 304, text: 'x' })),
  // @ts-expect-error a JSON response takes no text
  route(plain).handle(async () => ({ text: '{}' })),
  defineRoute({ ...spec, params: IdParams, responses: { 200: { description: 'q', schema: Queued } } }).handle(async (input) => {
    const { params, query, body } = input;
    // @ts-expect-error the route has no query schema, so its query has no fields
    const limit: unknown = query.limit;
    // @ts-expect-error params come from IdParams: `id`, a string
    const n: number = params.id;
    // @ts-expect-error no body schema: the body is undefined
    const text: string = body;
    return { body: { queued: [limit, n, text].length } };
  }),
];

describe('defineRoute', () => {
  it('hands the table routes carrying their declaration and handler (the checks above are compile-time)', () => {
    expect(declared).toHaveLength(13);
    for (const route of declared) {
      expect(route.operationId).toBe('typesCheck');
      expect(typeof route.handler).toBe('function');
    }
    expect(Object.keys(declared[0]!.responses)).toEqual(['201', '202']);
  });
});
