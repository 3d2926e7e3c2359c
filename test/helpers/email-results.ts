import { expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { auth } from './auth.js';
import type { TestEnv } from './env.js';

/** The account's email counts in its results window, as GET /results shows them to the token's account. */
export async function emailResults(env: Pick<TestEnv, 'api'>, token: string) {
  const res = await env.api().get('/api/v1/results').set(auth(token));
  expect(res.status).toBe(200);
  const e = ResultsResponse.parse(res.body).results.email;
  if (!e.available) throw new Error('email results not available');
  return e.data.window;
}
