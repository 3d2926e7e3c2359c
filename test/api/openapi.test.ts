import { describe, expect } from 'vitest';
import { errorStatuses } from '../../api/route-def.js';
import { routes } from '../../api/routes/index.js';
import { it } from '../helpers/fixture.js';

interface Operation {
  responses: Record<string, unknown>;
  security?: unknown[];
  'x-required-scope'?: string | null;
  'x-rate-bucket'?: string | null;
}

describe('GET /openapi.json', () => {
  it('is served without auth as OpenAPI 3.1 with the interface version 2026-09-29', async ({ env }) => {
    const res = await env.api().get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('2026-09-29');
    expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('lists every route of the table with its scope, bucket and error statuses', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    expect(routes.length).toBeGreaterThan(0);
    for (const route of routes) {
      const op = body.paths[route.path]?.[route.method] as Operation | undefined;
      expect(op, `${route.method} ${route.path}`).toBeDefined();
      expect(op!['x-required-scope']).toBe(route.scope);
      if (route.auth !== 'none') expect(op!['x-rate-bucket']).toBe(route.bucket);
      for (const status of [...Object.keys(route.responses), ...errorStatuses(route).map(String)]) {
        expect(Object.keys(op!.responses), `${route.method} ${route.path} ${status}`).toContain(status);
      }
      if (route.auth !== 'none') {
        expect(Object.keys(op!.responses)).toEqual(expect.arrayContaining(['401', '429', '503']));
        expect(op!.security).toEqual([{ bearerAuth: [] }]);
      }
      if (route.scope) expect(Object.keys(op!.responses)).toContain('403');
    }
  });

  it('names every operation with a unique camelCase operationId', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    const ids = routes.map((r) => (body.paths[r.path][r.method] as { operationId?: string }).operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z]+(?:[A-Z][a-z]*)*$/);
    expect(new Set(ids).size).toBe(routes.length);
    expect(body.paths['/api/v1/review'].get.operationId).toBe('listReviewCards');
  });

  it('declares query integers as integers, and marks a body required unless the route takes none', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    const param = (p: string, name: string) => body.paths[p].get.parameters.find((x: { name: string }) => x.name === name).schema;
    expect(param('/api/v1/review', 'limit')).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
    expect(param('/api/v1/workflows/{id}/runs', 'limit')).toEqual({ type: 'integer', minimum: 1, maximum: 50, default: 10 });
    expect(param('/api/v1/results', 'since')).toMatchObject({ type: 'integer', minimum: 0 });
    const required = (p: string) => body.paths[p].post.requestBody.required;
    expect(required('/api/v1/agent/messages')).toBe(true);
    expect(required('/api/v1/review/{id}/answer')).toBe(true);
    expect(required('/api/webhook/hook/{hookToken}')).toBe(true);
    expect(required('/api/v1/review/{id}/send')).toBe(false);
    expect(required('/api/v1/review/{id}/dismiss')).toBe(false);
    expect(body.paths['/api/v1/agent/messages'].post.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/AgentMessageRequest',
    });
    expect(body.components.schemas.AgentMessageRequest).toMatchObject({
      type: 'object',
      required: ['text'],
      properties: { waitSeconds: { type: 'integer', minimum: 0, maximum: 120 } },
    });
  });

  it("makes a lead contact's fields nullable, not the contact itself (a lead's `contact` may be null)", async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    expect(body.components.schemas.LeadContact.type).toBe('object');
    expect(body.components.schemas.LeadContact.properties.email).toEqual({ type: ['string', 'null'] });
    expect(body.components.schemas.LeadListItem.properties.contact).toEqual({
      anyOf: [{ $ref: '#/components/schemas/LeadContact' }, { type: 'null' }],
    });
    expect(body.components.schemas.LeadDetail.properties.contacts.items).toEqual({ $ref: '#/components/schemas/LeadContact' });
  });

  it('documents 413 on every route that reads a JSON body, and Retry-After on every 429 and 503', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    const jsonRoutes = routes.filter((r) => r.body || r.documentedBody || r.bodyParser);
    expect(jsonRoutes.length).toBeGreaterThan(10);
    for (const route of jsonRoutes) {
      const op = body.paths[route.path][route.method] as Operation;
      expect(Object.keys(op.responses), `${route.method} ${route.path}`).toContain('413');
    }
    let declared = 0;
    for (const route of routes) {
      const op = body.paths[route.path][route.method] as { responses: Record<string, { headers?: Record<string, unknown> }> };
      for (const status of ['429', '503']) {
        if (!op.responses[status]) continue;
        declared++;
        expect(op.responses[status].headers?.['Retry-After'], `${route.method} ${route.path} ${status}`).toMatchObject({
          required: true,
          schema: { type: 'string', pattern: '^\\d+$' },
        });
      }
    }
    expect(declared).toBeGreaterThan(routes.length);
  });

  it('states the limits the service enforces with 400, and none of the rules it answers otherwise', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    const bodyOf = (p: string, m = 'post') => {
      const schema = body.paths[p][m].requestBody.content['application/json'].schema;
      return schema.$ref ? body.components.schemas[schema.$ref.split('/').pop()] : schema;
    };
    expect(bodyOf('/api/v1/review/{id}/dismiss').properties.reason).toMatchObject({ type: 'string', maxLength: 2000 });
    const answer = bodyOf('/api/v1/review/{id}/answer').properties;
    // Bytes are not code points: maxLength n is the character ceiling, the exact byte rule rides along as a keyword.
    expect(answer.text).toMatchObject({ maxLength: 8000, 'x-max-utf8-bytes': 8000 });
    expect(answer.text.description).toContain('8,000 UTF-8 bytes');
    expect(answer.optionValues).toMatchObject({ minItems: 1, maxItems: 1 });
    expect(bodyOf('/api/v1/review/{id}/request-changes').properties.text).toMatchObject({
      minLength: 1,
      maxLength: 8000,
      'x-max-utf8-bytes': 8000,
      pattern: '\\S',
    });
    // The edge's text rule on every string a route's schemas read; 431 and the body limit on every route.
    expect(bodyOf('/api/v1/review/{id}/dismiss').properties.reason.not).toEqual({ pattern: '[\\u0000\\uD800-\\uDFFF]' });
    expect(Object.keys(body.paths['/api/v1/me'].get.responses)).toEqual(expect.arrayContaining(['400', '408', '431']));
    expect(body.paths['/api/webhook/hook/{hookToken}'].post['x-max-body-bytes']).toBe(64_000);
    const tags = bodyOf('/api/v1/leads/{id}', 'patch').properties.tags;
    expect(tags).toMatchObject({ 'x-max-distinct-items': 20, items: { maxLength: 64 } });
    // Repeats are dropped before the 20 are counted: a maxItems would refuse what the service takes.
    expect(tags.maxItems).toBeUndefined();
    const create = bodyOf('/api/v1/workflows');
    const details = create.properties.steps.items.properties.details;
    const lines = new RegExp(details.pattern);
    expect(lines.test(Array(8).fill('line').join('\r\n'))).toBe(true);
    expect(lines.test(Array(9).fill('line').join('\n'))).toBe(false);
    expect(lines.test('a\rb\nc')).toBe(true);

    // Answered 409 (or 200 with a per-event verdict), never 400: no rule a validating gateway would refuse first.
    const message = bodyOf('/api/v1/agent/messages').properties;
    expect(message.text).toMatchObject({ maxLength: 8000, 'x-max-utf8-bytes': 8000 });
    expect(message.clientRequestId.pattern).toBeUndefined();
    const newStepId = create.properties.steps.items.properties.id;
    expect(newStepId).toEqual({ type: 'string', description: expect.any(String), not: expect.any(Object) });
    expect(bodyOf('/api/v1/workflows/{id}', 'patch').properties.steps.items.properties.id).toMatchObject({ minLength: 1, maxLength: 64 });
    const event = bodyOf('/api/v1/measurement/events').properties.events;
    expect(Object.keys(event.items).sort()).toEqual(['description', 'x-event']);
    expect(event.items['x-event']).toMatchObject({ required: ['eventId', 'name', 'occurredAt'] });
    expect(event).toMatchObject({ minItems: 1, maxItems: 100 });
  });

  it('describes the error body once, as a component', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    expect(body.components.schemas.Error.properties.error).toEqual({ type: 'string' });
  });
});
