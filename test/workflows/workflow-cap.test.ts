import { describe, expect } from 'vitest';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

// An account keeps at most WORKFLOWS_PER_ACCOUNT workflows: one more is 409 `rejected`, nothing written.
let env: TestEnv;
let tenant: { accountId: string; token: string };
it.override('options', { env: { WORKFLOWS_PER_ACCOUNT: '3' } });
it.beforeAll(async ({ env: e }) => {
  env = e;
  tenant = await env.tenant();
});

const body = (name: string) => ({ name, scheduleText: 'every Monday at 9am', steps: [{ title: 'Pull new replies' }] });
const create = (name: string) => env.api().post('/api/v1/workflows').set(auth(tenant.token)).send(body(name));
const rows = async () =>
  Number((await env.deps.db('workflows').where({ account_id: tenant.accountId }).count<{ n: string }[]>({ n: '*' }))[0]?.n);
const audits = async () =>
  Number((await env.deps.db('audit_log').where({ account_id: tenant.accountId }).count<{ n: string }[]>({ n: '*' }))[0]?.n);

describe('the per-account workflow cap', () => {
  it('refuses one more than the cap with 409 rejected and writes nothing; a delete makes room', async () => {
    const made: string[] = [];
    for (const name of ['one', 'two', 'three']) made.push((await create(name).expect(201)).body.workflow.workflowId);
    const [before, auditBefore] = [await rows(), await audits()];
    const res = await create('four').expect(409);
    expect(res.body).toEqual({ error: 'rejected', message: 'account already has 3 workflows; delete one before creating another' });
    expect(await rows()).toBe(before);
    expect(await audits()).toBe(auditBefore);
    // Another account is not affected by this one's count.
    const other = await env.tenant();
    await env.api().post('/api/v1/workflows').set(auth(other.token)).send(body('elsewhere')).expect(201);
    // A deleted workflow no longer counts.
    await env.api().delete(`/api/v1/workflows/${made[0]}`).set(auth(tenant.token)).expect(200);
    await create('four').expect(201);
  });

  it('lets racing creates past the cap together never', async () => {
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
