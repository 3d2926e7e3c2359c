import fc from 'fast-check';
import request from 'supertest';
import type { z } from 'zod';
import { describe, expect } from 'vitest';
import type { RouteDef } from '../../api/route.js';
import { routes } from '../../api/routes.js';
import { it, type TestEnv } from '../helpers/fixture.js';

// Every route of the table, fed malformed input. Whatever arrives: never a 500, always the JSON
// error shape with no-store, and a refused request writes nothing (every write leaves an audit row).

let env: TestEnv;
let tenant: { accountId: string; token: string };
it.override('options', {
  env: { RATE_READS_BURST: '100000', RATE_WRITES_BURST: '100000', RATE_MESSAGES_BURST: '100000', RATE_ACCOUNT_BURST: '100000' },
});
it.beforeAll(async ({ env: e }) => {
  env = e;
  tenant = await env.tenant();
});

const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme', maxLength: 50 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\ufeff',
    '💥'.repeat(3000),
    'x'.repeat(70_000),
    '../../etc/passwd',
    "'; drop table accounts; --",
    '%00',
    'null',
    '-1',
    '1e309',
    'NaN',
  ),
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
  return fc.oneof(
    jsonValue,
    known,
    fc.tuple(known, fc.dictionary(fc.string({ minLength: 1, maxLength: 20 }), jsonValue, { maxKeys: 3 })).map(([a, b]) => ({ ...b, ...a })),
  );
}

function query(route: RouteDef) {
  const keys = fieldsOf(route.query);
  if (!keys.length) return fc.constant({} as Record<string, string | string[]>);
  return fc.dictionary(fc.constantFrom(...keys), fc.oneof(queryValue, fc.array(queryValue, { minLength: 2, maxLength: 3 })), {
    maxKeys: keys.length,
  });
}

async function auditCount(): Promise<number> {
  const [row] = await env.rt.db('audit_log').where({ account_id: tenant.accountId }).count<{ n: string }[]>({ n: '*' });
  return Number(row?.n ?? 0);
}

/** Percent-encodes the UTF-8 bytes, so even a lone surrogate reaches the server as something. */
const encodePath = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** One request, exactly as it will be sent: every choice in it was drawn by fast-check. */
interface Plan {
  path: string;
  query: Record<string, string | string[]>;
  /** The raw text sent as the body (JSON, or sometimes not JSON at all); undefined for GET and DELETE. */
  payload?: string;
}

/**
 * A route's requests. Even whether a string body goes out raw is drawn here, never from Math.random,
 * so a failing run replays from its seed (and shrinks).
 */
function plans(route: RouteDef): fc.Arbitrary<Plan> {
  return fc
    .record({
      id: fc.oneof(nasty, fc.constantFrom('x', 'unknown_id')),
      query: query(route),
      b: body(route),
      raw: fc.nat({ max: 9 }).map((n) => n < 3),
    })
    .map(({ id, query, b, raw }) => {
      const path = route.path.replace(/\{[A-Za-z]+\}/g, encodePath(id.slice(0, 500)));
      if (route.method === 'get' || route.method === 'delete') return { path, query };
      // Sometimes not JSON at all.
      return { path, query, payload: typeof b === 'string' && b.length > 1 && raw ? b : JSON.stringify(b) };
    });
}

function call(route: RouteDef, plan: Plan) {
  let req = request(env.app)[route.method](plan.path).query(plan.query);
  if (route.auth !== 'none') req = req.set('Authorization', `Bearer ${tenant.token}`);
  return plan.payload === undefined ? req : req.set('Content-Type', 'application/json').send(plan.payload);
}

const SEED = 20261122;

describe('fuzzing every route of the table', () => {
  it('draws every request from fast-check: the same seed gives the same requests', () => {
    for (const route of routes) {
      const draw = () => fc.sample(plans(route), { seed: SEED, numRuns: 200 });
      expect(draw(), `${route.method} ${route.path}`).toEqual(draw());
    }
  });

  it.each(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s never answers 500 and writes nothing it refuses',
    async (_name, route) => {
      await fc.assert(
        fc.asyncProperty(plans(route), async (plan) => {
          const before = await auditCount();
          const res = await call(route, plan);
          expect(
            res.status,
            `${route.method} ${JSON.stringify({ path: plan.path.slice(0, 120), q: plan.query, b: plan.payload?.slice(0, 200) })}`,
          ).not.toBe(500);
          expect(res.status).toBeLessThan(500);
          // JSON, or the media type a success declares (the content feeds are XML).
          const declared = res.status < 400 ? route.responses[res.status]?.contentType : undefined;
          expect(res.headers['content-type']?.split(';')[0]).toBe(declared ?? 'application/json');
          if (res.status >= 400) {
            expect(typeof res.body.error).toBe('string');
            expect(res.headers['cache-control']).toBe('no-store');
            expect(await auditCount()).toBe(before);
          }
        }),
        { numRuns: 20, seed: SEED },
      );
    },
  );
});
