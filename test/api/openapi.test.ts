import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatuses } from '../../api/route.js';
import { routes } from '../../api/routes.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';

let env: TestEnv;
beforeAll(async () => {
  env = await setupTestEnv();
});
afterAll(() => env.close());

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

  it('describes the error body once, as a component', async () => {
    const { body } = await env.api().get('/openapi.json');
    expect(body.components.schemas.Error.properties.error).toEqual({ type: 'string' });
  });
});
