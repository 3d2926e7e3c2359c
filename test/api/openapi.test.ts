import { describe, expect } from 'vitest';
import { errorStatuses } from '../../api/route.js';
import { routes } from '../../api/routes.js';
import { it, type TestEnv } from '../helpers/fixture.js';

let env: TestEnv;
it.beforeAll(({ env: e }) => {
  env = e;
});

interface Operation {
  responses: Record<string, unknown>;
  security?: unknown[];
  'x-required-scope'?: string | null;
  'x-rate-bucket'?: string | null;
}

describe('GET /openapi.json', () => {
  it('is served without auth as OpenAPI 3.1 with the interface version 2026-09-29', async () => {
    const res = await env.api().get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(res.body.info.version).toBe('2026-09-29');
    expect(res.body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
  });

  it('lists every route of the table with its scope, bucket and error statuses', async () => {
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

  it('names every operation with a unique camelCase operationId', async () => {
    const { body } = await env.api().get('/openapi.json');
    const ids = routes.map((r) => (body.paths[r.path][r.method] as { operationId?: string }).operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z]+(?:[A-Z][a-z]*)*$/);
    expect(new Set(ids).size).toBe(routes.length);
    expect(body.paths['/api/v1/review'].get.operationId).toBe('listReviewCards');
  });

  it('declares query integers as integers, and marks a body required unless the route takes none', async () => {
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

  it("makes a lead contact's fields nullable, not the contact itself (a lead's `contact` may be null)", async () => {
    const { body } = await env.api().get('/openapi.json');
    expect(body.components.schemas.LeadContact.type).toBe('object');
    expect(body.components.schemas.LeadContact.properties.email).toEqual({ type: ['string', 'null'] });
    expect(body.components.schemas.LeadListItem.properties.contact).toEqual({
      anyOf: [{ $ref: '#/components/schemas/LeadContact' }, { type: 'null' }],
    });
    expect(body.components.schemas.LeadDetail.properties.contacts.items).toEqual({ $ref: '#/components/schemas/LeadContact' });
  });

  it('describes the error body once, as a component', async () => {
    const { body } = await env.api().get('/openapi.json');
    expect(body.components.schemas.Error.properties.error).toEqual({ type: 'string' });
  });
});
