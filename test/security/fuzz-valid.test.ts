import fc from 'fast-check';
import request from 'supertest';
import { describe, expect } from 'vitest';
import { buildCard, buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import {
  DescriptionValidator,
  type DrawnRequest,
  describedValid,
  type Operation,
  operations,
  validRequests,
} from '../helpers/openapi-requests.js';
import type { JsonSchema } from '../helpers/schema-arbitrary.js';
import { auth } from '../helpers/auth.js';

// Requests drawn from /openapi.json's own request schemas, so valid by the description: the service must
// never answer one of them 400 (a validating gateway or a generated client trusts the description), nor
// 5xx. Path ids are drawn from the account's real cards, leads and workflows as well as from the schema,
// so handlers run past the lookup to their own rules.
//
// Seeded (FUZZ_SEED, default below) so a run is the same requests every time; FUZZ_VALID_RUNS sets the
// requests per operation (default 10; 40 ran clean when the description was made strict), which bounds the file's time.

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20261202;
const RUNS = Number(process.env.FUZZ_VALID_RUNS ?? 10);

let tenant: { accountId: string; token: string };
let doc: JsonSchema;
let validator: DescriptionValidator;
const ids: Record<string, Record<string, string[]>> = {};

// The agent's turns run in-process, so a drawn message that waits for its reply (waitSeconds up to 60) gets
// one from the offline brain rather than waiting out its whole time with nobody to take the turn.
it.override('options', {
  env: { RATE_READS_BURST: '100000', RATE_WRITES_BURST: '100000', RATE_MESSAGES_BURST: '100000', RATE_ACCOUNT_BURST: '100000' },
  pools: ['agent-turns'],
});
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
  doc = (await request(env.app).get('/openapi.json').expect(200)).body as JsonSchema;
  validator = new DescriptionValidator(doc);
  const db = env.deps.db;
  const kinds = ['plain', 'question', 'choice', 'mail_reply', 'mail_draft', 'plain', 'question', 'choice'] as const;
  const cards = await Promise.all(kinds.map((k) => buildCard(db, tenant.accountId, k)));
  const leads = await Promise.all([1, 2, 3].map(() => buildLead(db, tenant.accountId)));
  const workflows: string[] = [];
  for (const name of ['Weekly digest', 'Monday report']) {
    const res = await request(env.app)
      .post('/api/v1/workflows')
      .set(auth(tenant.token))
      .send({ name, scheduleText: 'every monday at 9am', steps: [{ title: 'Summarise the week' }] })
      .expect(201);
    workflows.push(res.body.workflow.workflowId);
  }
  ids['/api/v1/review/'] = { id: cards.map((c) => c.id) };
  ids['/api/v1/leads/'] = { id: leads.map((l) => l.id) };
  ids['/api/v1/workflows/'] = { id: workflows };
});

const pathOf = (op: Operation, req: DrawnRequest) =>
  op.path.replace(/\{([A-Za-z]+)\}/g, (_m, name: string) => encodeURIComponent(req.path[name] ?? ''));

function send(env: TestEnv, op: Operation, req: DrawnRequest) {
  const method = op.method as 'get' | 'post' | 'patch' | 'delete';
  let r = request(env.app)[method](pathOf(op, req)).query(req.query);
  if (op.responses['401']) r = r.set(auth(tenant.token));
  for (const [k, v] of Object.entries(req.headers)) r = r.set(k, v);
  if (req.body === undefined) return r;
  return r.set('Content-Type', 'application/json').send(JSON.stringify(req.body));
}

/** Operations whose body is JSON the description states (or none): the two secret-URL doors take raw bodies. */
const JSON_ROUTES = (o: Operation) => !o.path.startsWith('/api/webhook/') && !o.path.startsWith('/api/mail/inbound/');

describe('requests valid by /openapi.json', () => {
  it('are never answered 400 or 5xx', async ({ env }) => {
    const ops = operations(doc).filter(JSON_ROUTES);
    expect(ops.length).toBeGreaterThan(25);
    let sent = 0;
    const refused: string[] = [];
    for (const op of ops) {
      const known = Object.entries(ids).find(([prefix]) => op.path.startsWith(prefix))?.[1] ?? {};
      await fc.assert(
        fc.asyncProperty(validRequests(op, doc, known), async (req) => {
          fc.pre(describedValid(op, validator, req));
          const res = await send(env, op, req);
          sent++;
          const what = `${op.method.toUpperCase()} ${op.path} ${JSON.stringify({ ...req, body: JSON.stringify(req.body)?.slice(0, 300) })}`;
          expect(res.status, `${what} → ${JSON.stringify(res.body)} (FUZZ_SEED=${SEED})`).toBeLessThan(500);
          // A rule that depends on stored state or the clock is listed on the operation (x-state-rules).
          const stateRule = (op.stateRules ?? []).some((r) => String(res.body.error).startsWith(r));
          if (res.status === 400 && !stateRule) refused.push(`${what} → ${res.body.error}`);
          // Every answer is one the description lists for the operation.
          expect(Object.keys(op.responses), `${what} answered ${res.status}`).toContain(String(res.status));
        }),
        { numRuns: RUNS, seed: SEED, endOnFailure: true, maxSkipsPerRun: 100 },
      );
    }
    expect(refused, `valid by the description, answered 400 (FUZZ_SEED=${SEED})`).toEqual([]);
    expect(sent).toBeGreaterThan(ops.length * (RUNS / 2));
  }, 600_000);
});
