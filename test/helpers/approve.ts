import { auth } from './auth.js';
import type { TestEnv } from './env.js';

/** A person approves a review card through the API (POST /review/{id}/answer), as the account whose token it is. */
export const approveCard = (env: Pick<TestEnv, 'api'>, token: string, cardId: string) =>
  env.api().post(`/api/v1/review/${cardId}/answer`).set(auth(token)).send({ action: 'approve' });
