import request from 'supertest';
import { describe, expect } from 'vitest';
import type { RouteDef } from '../../api/route-def.js';
import { routes } from '../../api/routes/index.js';
import { startTurn } from '../helpers/agent.js';
import { newId } from '../../src/ids.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { createWorkflow } from '../../src/workflows/workflows.service.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

// Two accounts with one of everything each. For every route with an {id}, account B asking for
// account A's id must get exactly what an unknown id gets; list routes must show B nothing of A's.

type Tenant = { accountId: string; token: string; tokenId: string };
let a: Tenant;
let b: Tenant;
const owned: Record<string, string> = {};

/** For each kind of {id}: how to make one in an account, and a valid body for each verb. */
const RESOURCES: Array<{ match: RegExp; kind: string; body?: unknown }> = [
  { match: /^\/api\/v1\/review\/\{id\}$/, kind: 'card' },
  { match: /^\/api\/v1\/review\/\{id\}\/answer$/, kind: 'card', body: { action: 'approve' } },
  { match: /^\/api\/v1\/review\/\{id\}\/send$/, kind: 'card', body: {} },
  { match: /^\/api\/v1\/review\/\{id\}\/request-changes$/, kind: 'card', body: { text: 'shorter please' } },
  { match: /^\/api\/v1\/review\/\{id\}\/snooze$/, kind: 'card', body: { until: Date.now() + 3_600_000 } },
  { match: /^\/api\/v1\/review\/\{id\}\/dismiss$/, kind: 'card', body: {} },
  { match: /^\/api\/v1\/leads\/\{id\}$/, kind: 'lead', body: { tags: ['x'] } },
  { match: /^\/api\/v1\/agent\/messages\/\{requestId\}$/, kind: 'message' },
  { match: /^\/api\/v1\/workflows\/\{id\}(\/runs|\/pause|\/resume)?$/, kind: 'workflow', body: { name: 'renamed' } },
  { match: /^\/api\/v1\/content\/posts\/\{slug\}$/, kind: 'post' },
];

async function makeAll(env: TestEnv, t: Tenant, tag: string): Promise<Record<string, string>> {
  const card = newId('card');
  await cardsRepository(env.deps.db).insert({
    id: card,
    accountId: t.accountId,
    kind: 'approval',
    sourceType: 'budget_change',
    title: `card ${tag}`,
    payload: {},
    actions: ['approve', 'dismiss'],
    primaryLabel: 'Approve',
  });
  const lead = await buildLead(env.deps.db, t.accountId, { domain: `${tag}.example.com`, companyName: `${tag} Inc` });
  const message = await startTurn(env.deps, {
    accountId: t.accountId,
    kind: 'message',
    origin: 'api',
    tokenId: t.tokenId,
    text: `hello from ${tag}`,
  });
  const actor = { accountId: t.accountId, actor: 'api' as const, tokenId: t.tokenId, tokenLabel: 'test', method: 'POST', route: 'test' };
  const workflow = await createWorkflow(env.deps, actor, { name: `wf ${tag}`, scheduleText: 'daily', steps: [{ title: 'x' }] });
  // A published post, through the review queue like any other: its slug is `${tag}-post`.
  const post = await cardsRepository(env.deps.db).insert({
    id: newId('card'),
    accountId: t.accountId,
    kind: 'approval',
    sourceType: 'blog_post',
    title: `post ${tag}`,
    payload: { work: 'blog_post', draft: { subject: `${tag} post`, body: `All about ${tag}.` } },
    actions: ['approve', 'dismiss'],
    primaryLabel: 'Approve',
  });
  const approved = await request(env.app).post(`/api/v1/review/${post.id}/answer`).set(auth(t.token)).send({ action: 'approve' });
  expect(approved.status).toBe(200);
  return { card, lead: lead.id, message: message.turn.id, workflow: workflow.workflowId, post: `${tag}-post` };
}

it.beforeAll(async ({ env }) => {
  a = await env.tenant(undefined, 'Alpha');
  b = await env.tenant(undefined, 'Bravo');
  Object.assign(owned, await makeAll(env, a, 'alpha'));
  await makeAll(env, b, 'bravo');
});

const idRoutes = routes.filter((r) => r.path.includes('{') && r.auth !== 'none');
const resourceOf = (r: RouteDef) => RESOURCES.find((x) => x.match.test(r.path));

function call(env: TestEnv, r: RouteDef, id: string, token: string) {
  const res = RESOURCES.find((x) => x.match.test(r.path))!;
  const req = request(env.app)
    [r.method](r.path.replace(/\{[A-Za-z]+\}/, id))
    .set(auth(token));
  return r.method === 'get' || r.method === 'delete' ? req : req.send((res.body ?? {}) as object);
}

describe('tenant isolation', () => {
  it('covers every route with an {id} (a new route must be added here)', () => {
    expect(idRoutes.filter((r) => !resourceOf(r)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });

  it.for(idRoutes.map((r) => [`${r.method.toUpperCase()} ${r.path}`, r] as const))(
    "%s answers another account's id exactly like an unknown one",
    async ([_n, r], { env }) => {
      const kind = resourceOf(r)!.kind;
      const theirs = await call(env, r, owned[kind]!, b.token);
      const unknown = await call(env, r, `${owned[kind]!.split('_')[0]}_doesNotExist000000000`, b.token);
      expect(theirs.status).toBe(404);
      expect(theirs.body).toEqual({ error: 'not found' });
      expect(unknown.status).toBe(theirs.status);
      expect(unknown.body).toEqual(theirs.body);
      const strip = (h: Record<string, string>) =>
        Object.keys(h)
          .filter((k) => !['date', 'x-request-id', 'ratelimit-remaining', 'ratelimit-reset', 'content-length', 'etag'].includes(k))
          .sort();
      expect(strip(unknown.headers)).toEqual(strip(theirs.headers));
      // And the owner still sees it: the 404 was the account boundary, not a broken route.
      if (r.method === 'get') expect((await call(env, r, owned[kind]!, a.token)).status).toBe(200);
    },
  );

  it.for(routes.filter((r) => r.method === 'get' && !r.path.includes('{') && r.scope).map((r) => [r.path] as const))(
    "%s shows nothing of another account's",
    async ([path], { env }) => {
      const res = await request(env.app).get(path).set(auth(b.token));
      expect(res.status).toBe(200);
      // Feeds are XML text; every other list is JSON.
      const text = res.type === 'application/json' ? JSON.stringify(res.body) : res.text;
      for (const id of Object.values(owned)) expect(text).not.toContain(id);
      expect(text).not.toMatch(/alpha/i);
    },
  );
});
