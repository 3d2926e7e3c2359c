import fc from 'fast-check';
import request from 'supertest';
import type { z } from 'zod';
import { describe, expect } from 'vitest';
import type { RouteDef } from '../../api/route-def.js';
import { routes } from '../../api/routes/index.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { countRows } from '../helpers/rows.js';

// Every route of the table, fed malformed input. Whatever arrives: never a 5xx, always the JSON
// error shape with no-store, and a refused request writes nothing (every write leaves an audit row).
// Besides odd values, each request may carry the classes that once answered 500: NUL and unpaired
// surrogates in any string, a body its Content-Encoding cannot undo, JSON nested past the edge's
// limit, and percent-encoding that cannot be decoded in the path or the query.
//
// Seeded (the same requests every run, named in a failure): FUZZ_SEED=<seed> draws others; FUZZ_RUNS
// sets the requests per route (default 60, about 15 s here). Requests valid by /openapi.json are
// fuzzed in fuzz-valid.test.ts.

let tenant: { accountId: string; token: string };
it.override('options', {
  env: { RATE_READS_BURST: '100000', RATE_WRITES_BURST: '100000', RATE_MESSAGES_BURST: '100000', RATE_ACCOUNT_BURST: '100000' },
});
it.beforeAll(async ({ env }) => {
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
    'x\udc00y',
    '\udfff\ud800',
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

/** Percent-encoding that cannot be decoded (or decodes to bytes that are not UTF-8, or to NUL). */
const badPercent = fc.constantFrom('%', '%Z', '%ZZ', '%E0%A4', '%ED%A0%80', '%C0%AF', '%FF', '%00', 'a%', '%%41', '%u0041');

/** How a body is labelled: as it is, or with an encoding its bytes are not (the JSON text is sent uncompressed). */
const encodings = fc.constantFrom(undefined, undefined, undefined, 'gzip', 'br', 'deflate', 'gzip, br', 'x-unknown');

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

const auditCount = (env: TestEnv) => countRows(env, 'audit_log', { account_id: tenant.accountId });

/** Percent-encodes the UTF-8 bytes, so even a lone surrogate reaches the server as something. */
const encodePath = (s: string) => [...Buffer.from(s, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** One request, exactly as it will be sent: every choice in it was drawn by fast-check. */
interface Plan {
  path: string;
  query: Record<string, string | string[]>;
  /** The raw text sent as the body (JSON, or sometimes not JSON at all); undefined for GET and DELETE. */
  payload?: string;
  /** A Content-Encoding the payload is not in (so the server cannot undo it), or none. */
  encoding?: string;
}

/**
 * A route's requests. Even whether a string body goes out raw is drawn here, never from Math.random,
 * so a failing run replays from its seed (and shrinks).
 */
function plans(route: RouteDef): fc.Arbitrary<Plan> {
  return fc
    .record({
      id: fc.oneof(
        nasty.map((v) => encodePath(v.slice(0, 500))),
        fc.constantFrom('x', 'unknown_id'),
        fc.tuple(fc.constantFrom('', 'x', 'card_'), badPercent).map(([a, b]) => a + b),
      ),
      query: query(route),
      badQuery: fc.option(fc.tuple(fc.constantFrom(...fieldsOf(route.query), 'x'), badPercent), { freq: 3 }),
      b: body(route),
      raw: fc.nat({ max: 9 }).map((n) => n < 3),
      deep: fc.option(fc.integer({ min: 65, max: 20_000 }), { freq: 8 }),
      encoding: encodings,
    })
    .map(({ id, query, badQuery, b, raw, deep, encoding }) => {
      let path = route.path.replace(/\{[A-Za-z]+\}/g, id);
      if (badQuery) path += `?${badQuery[0]}=${badQuery[1]}`;
      if (route.method === 'get' || route.method === 'delete') return { path, query };
      // Sometimes not JSON at all; sometimes nested past the edge's limit.
      let payload = typeof b === 'string' && b.length > 1 && raw ? b : JSON.stringify(b);
      if (deep) payload = `${'['.repeat(deep)}${payload}${']'.repeat(deep)}`;
      return { path, query, payload, encoding };
    });
}

function call(env: TestEnv, route: RouteDef, plan: Plan) {
  let req = request(env.app)[route.method](plan.path).query(plan.query);
  if (route.auth !== 'none') req = req.set(auth(tenant.token));
  if (plan.payload === undefined) return req;
  if (plan.encoding) req = req.set('Content-Encoding', plan.encoding);
  return req.set('Content-Type', 'application/json').send(plan.payload);
}

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20261202;
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);

async function assertReplayable<T>(property: fc.IAsyncPropertyWithHooks<T>, params: fc.Parameters<T>): Promise<void> {
  try {
    await fc.assert(property, params);
  } catch (err) {
    (err as Error).message = `replay with FUZZ_SEED=${SEED}: ${(err as Error).message}`;
    throw err;
  }
}

describe('fuzzing every route of the table', () => {
  it('draws every request from fast-check: the same seed gives the same requests', () => {
    for (const route of routes) {
      const draw = () => fc.sample(plans(route), { seed: SEED, numRuns: 200 });
      expect(draw(), `${route.method} ${route.path}`).toEqual(draw());
    }
  });

  it.for(routes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    '%s never answers 500 and writes nothing it refuses',
    async ([_name, route], { env }) => {
      // fast-check names the seed and the shrunk case's path; the prefix says how to replay the whole file.
      await assertReplayable(
        fc.asyncProperty(plans(route), async (plan) => {
          const before = await auditCount(env);
          const res = await call(env, route, plan);
          const sent = { path: plan.path.slice(0, 120), q: plan.query, b: plan.payload?.slice(0, 200), enc: plan.encoding };
          expect(res.status, `${route.method} ${JSON.stringify(sent)} (replay: FUZZ_SEED=${SEED})`).toBeLessThan(500);
          // Node's HTTP server refuses a request line and headers over 16 KB itself, before the app (a long query).
          if (res.status === 431) return;
          // JSON, or the media type a success declares (the content feeds are XML).
          const declared = res.status < 400 ? route.responses[res.status]?.contentType : undefined;
          expect(res.headers['content-type']?.split(';')[0]).toBe(declared ?? 'application/json');
          if (res.status >= 400) {
            expect(typeof res.body.error).toBe('string');
            expect(res.headers['cache-control']).toBe('no-store');
            expect(await auditCount(env)).toBe(before);
          }
        }),
        { numRuns: RUNS, seed: SEED },
      );
    },
  );
});
