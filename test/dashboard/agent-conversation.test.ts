import { describe, expect } from 'vitest';
import { auth } from '../helpers/auth.js';
import { signedIn, signInAs } from '../helpers/dashboard.js';
import { agentOptions, it } from '../helpers/fixture.js';

it.override('options', agentOptions());

const texts = (body: { items: { role: string; text: string }[] }) => body.items.filter((i) => i.role === 'user').map((i) => i.text);

describe("a person's agent conversation in the dashboard", () => {
  it('is the person’s own across sessions: a 404 to a colleague and to a token, in no token’s thread', async ({ agent: env }) => {
    const tenant = await env.tenant();
    const ana = await signedIn(env, { accountId: tenant.accountId });
    const bo = await signedIn(env, { accountId: tenant.accountId, role: 'member' });
    const sent = await ana.request('post', '/dashboard/api/v1/agent/messages', { text: 'from ana', waitSeconds: 10 });
    expect(sent.status).toBe(200);
    const requestId = String(sent.body.requestId);
    expect((await bo.request('post', '/dashboard/api/v1/agent/messages', { text: 'from bo', waitSeconds: 10 })).status).toBe(200);
    expect((await env.send(tenant.token, { text: 'from the token', waitSeconds: 10 })).status).toBe(200);

    // Ana signs in again: a new session, the same conversation.
    const again = await signInAs(env, ana);
    const mine = await again.request('get', `/dashboard/api/v1/agent/messages/${requestId}`);
    expect(mine.status).toBe(200);
    expect(mine.body.message.text).toBe('from ana');
    expect(texts((await again.request('get', '/dashboard/api/v1/agent/thread')).body)).toEqual(['from ana']);

    // A colleague's session and a token of the account: 404, and not in their threads.
    expect((await bo.request('get', `/dashboard/api/v1/agent/messages/${requestId}`)).status).toBe(404);
    expect(texts((await bo.request('get', '/dashboard/api/v1/agent/thread')).body)).toEqual(['from bo']);
    expect((await env.api().get(`/api/v1/agent/messages/${requestId}`).set(auth(tenant.token))).status).toBe(404);
    expect(texts((await env.api().get('/api/v1/agent/thread').set(auth(tenant.token))).body)).toEqual(['from the token']);
  });
});
