import fc from 'fast-check';
import request from 'supertest';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '../../api/route.js';
import { routes } from '../../api/routes.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';

// Every route of the table, fed malformed input. Whatever arrives: never a 500, always the JSON
// error shape with no-store, and a refused request writes nothing (every write leaves an audit row).

let env: TestEnv;
let tenant: { accountId: string; token: string };
beforeAll(async () => {
  env = await setupTestEnv({ env: { RATE_READS_BURST: '100000', RATE_WRITES_BURST: '100000', RATE_MESSAGES_BURST: '100000', RATE_ACCOUNT_BURST: '100000' } });
  tenant = await env.tenant();
});
afterAll(() => env.close());

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', '\ufeff', '💥'.repeat(3000), 'x'.repeat(70_000), '../../etc/passwd', "'; drop table accounts; --", '%00', 'null', '-1', '1e309', 'NaN'),
);
/** Query values stay within what an HTTP server reads as headers (Node refuses over 16 KB with 431). */
const queryValue = nasty.map((v) => v.slice(0, 2_000));
const jsonValue = fc.oneof(fc.jsonValue({ maxDepth: 3 }), nasty, fc.constantFrom(null, true, 0, -1, 1e308, [], {}));

/** Known field names of a route's body schema, so the fuzz also tries wrong types for real fields. */
function fieldsOf(schema: z.ZodType | undefined): string[] {
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  return shape ? Object.keys(shape) : [];
}

function body(route: RouteDef) {
  const fields = fieldsOf(route.body);
  const known = fields.length ? fc.dictionary(fc.constantFrom(...fields), jsonValue, { maxKeys: fields.length }) : fc.constant({});
  return fc.oneof(jsonValue, known, fc.tuple(known, fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), jsonValue, { maxKeys: 3 })).map(([a, b]) => ({ ...b, ...a })));
}

function query(route: RouteDef) {
  const keys = fieldsOf(route.query);
  if (!keys.length) return fc.constant({} as Record<string, string | string[]>);
  return fc.dictionary(fc.constantFrom(...keys), fc.oneof(queryValue, fc.array(queryValue, { minLength: 2, maxLength: 3 })), { maxKeys: keys.length });
}

async function auditCount(): Promise<number> {
  const [row] = await env.rt.db('audit_log').where({ account_id: tenant.accountId }).count<{ n: string }[]>({ n: '*' });
  return Number(row?.n ?? 0);
}

/** Percent-encodes the UTF-8 bytes, so even a lone surrogate reaches the server as something. */
const encodePath = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

function call(route: RouteDef, id: string, q: Record<string, string | string[]>, b: unknown) {
  const path = route.path.replace(/\{[A-Za-z]+\}/g, encodePath(id.slice(0, 500)));
  let req = request(env.app)[route.method](path).query(q);
  if (route.auth !== 'none') req = req.set('Authorization', `Bearer ${tenant.token}`);
  if (route.method === 'get' || route.method === 'delete') return req;
  return typeof b === 'string' && b.length > 1 && Math.random() < 0.3
    ? req.set('Content-Type', 'application/json').send(b) // sometimes not JSON at all
    : req.set('Content-Type', 'application/json').send(JSON.stringify(b));
}

describe('fuzzing every route of the table', () => {
  it.each(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))('%s never answers 500 and writes nothing it refuses', async (_name, route) => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(nasty, fc.constantFrom('x', 'unknown_id')), query(route), body(route), async (id, q, b) => {
        const before = await auditCount();
        const res = await call(route, id, q, b);
        expect(res.status, `${route.method} ${route.path} ${JSON.stringify({ id: id.slice(0, 40), q, b: JSON.stringify(b)?.slice(0, 200) })}`).not.toBe(500);
        expect(res.status).toBeLessThan(500);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        if (res.status >= 400) {
          expect(typeof res.body.error).toBe('string');
          expect(res.headers['cache-control']).toBe('no-store');
          expect(await auditCount()).toBe(before);
        }
      }),
      { numRuns: 20, seed: 20261122 },
    );
  });
});
