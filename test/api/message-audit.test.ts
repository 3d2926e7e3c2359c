import { describe, expect } from 'vitest';
import { listAudit } from '../../src/audit/audit.service.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';

it.override('options', agentOptions());

const auditOf = async (env: AgentEnv, accountId: string, targetId: string) =>
  (await listAudit(env.deps.db, accountId, 50))
    .filter((e) => e.targetId === targetId)
    .map((e) => ({ route: e.route, method: e.method, status: e.status }));

describe('the audit row of POST /agent/messages', () => {
  it('says 200 when the request waited and answered 200', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const res = await env.send(token, { text: 'hello there', waitSeconds: 30 });
    expect(res.status).toBe(200);
    expect(await auditOf(env, accountId, res.body.requestId)).toEqual([{ route: '/api/v1/agent/messages', method: 'POST', status: 200 }]);
  });

  it('says 202 when the request answered 202, and keeps it when a retry of that message answers 200', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const res = await env.send(token, { text: 'hi', clientRequestId: 'once' });
    expect(res.status).toBe(202);
    const first = [{ route: '/api/v1/agent/messages', method: 'POST', status: 202 }];
    expect(await auditOf(env, accountId, res.body.requestId)).toEqual(first);
    // The retry writes nothing, so it leaves no audit row and does not rewrite the first one.
    const retry = await env.send(token, { text: 'hi', clientRequestId: 'once', waitSeconds: 30 });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ requestId: res.body.requestId, deduplicated: true });
    expect(await auditOf(env, accountId, res.body.requestId)).toEqual(first);
  });
});
