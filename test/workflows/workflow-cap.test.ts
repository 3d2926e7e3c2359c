import { describe, expect } from 'vitest';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { countRows } from '../helpers/rows.js';

// An account keeps at most WORKFLOWS_PER_ACCOUNT workflows: one more is 409 `rejected`, nothing written.
let tenant: { accountId: string; token: string };
it.override('options', { env: { WORKFLOWS_PER_ACCOUNT: '3' } });
it.beforeAll(async ({ env }) => {
  tenant = await env.tenant();
});

const body = (name: string) => ({ name, scheduleText: 'every Monday at 9am', steps: [{ title: 'Pull new replies' }] });
const create = (env: TestEnv, name: string) => env.api().post('/api/v1/workflows').set(auth(tenant.token)).send(body(name));
const workflowCount = (env: TestEnv) => countRows(env, 'workflows', { account_id: tenant.accountId });
const audits = (env: TestEnv) => countRows(env, 'audit_log', { account_id: tenant.accountId });

describe('the per-account workflow cap', () => {
  it('refuses one more than the cap with 409 rejected and writes nothing; a delete makes room', async ({ env }) => {
    const made: string[] = [];
    for (const name of ['one', 'two', 'three']) made.push((await create(env, name).expect(201)).body.workflow.workflowId);
    const [before, auditBefore] = [await workflowCount(env), await audits(env)];
    const res = await create(env, 'four').expect(409);
    expect(res.body).toEqual({ error: 'rejected', message: 'account already has 3 workflows; delete one before creating another' });
    expect(await workflowCount(env)).toBe(before);
    expect(await audits(env)).toBe(auditBefore);
    // Another account is not affected by this one's count.
    const other = await env.tenant();
    await env.api().post('/api/v1/workflows').set(auth(other.token)).send(body('elsewhere')).expect(201);
    // A deleted workflow no longer counts.
    await env.api().delete(`/api/v1/workflows/${made[0]}`).set(auth(tenant.token)).expect(200);
    await create(env, 'four').expect(201);
  });

  it('lets racing creates past the cap together never', async ({ env }) => {
    const other = await env.tenant();
    const send = (i: number) =>
      env
        .api()
        .post('/api/v1/workflows')
        .set(auth(other.token))
        .send(body(`race ${i}`));
    const statuses = (await Promise.all([0, 1, 2, 3, 4, 5].map(send))).map((r) => r.status).sort();
    expect(statuses).toEqual([201, 201, 201, 409, 409, 409]);
  });
});
