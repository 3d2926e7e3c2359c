import { expect } from 'vitest';
import { freshEmail, PASSWORD, signedIn, signInRequest } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';

// Few failures per client network: every request of this file comes from 127.0.0.1.
it.override('options', { env: { DASHBOARD_SIGNIN_NETWORK_FAILURES: '3', DASHBOARD_SIGNIN_ADDRESS_FAILURES: '100' } });

it('throttles failures per client network across addresses, with Retry-After, and a right password waits too', async ({ env }) => {
  const who = await signedIn(env);
  for (let i = 0; i < 3; i++)
    expect((await signInRequest(env, { email: freshEmail('guess'), password: 'wrong password 123' })).status).toBe(401);
  const refused = await signInRequest(env, { email: who.email, password: PASSWORD });
  expect(refused.status).toBe(429);
  expect(refused.body).toEqual({ error: 'rate limited' });
  expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
  expect(refused.headers['set-cookie']).toBeUndefined();
  // Reset requests from the network are counted under their own key, and still answer 202 here.
  const reset = await env
    .api()
    .post('/dashboard/api/password-resets')
    .set('Origin', new URL(env.config.baseUrl).origin)
    .send({ email: who.email });
  expect(reset.status).toBe(202);
});
