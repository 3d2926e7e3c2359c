import { expect } from 'vitest';
import { startPools } from '../../workers/main.js';
import { setupTestEnv, type TestEnv } from './env.js';
import { buildCard } from './factories.js';
import { until } from './processes.js';
import { startHttpProvider } from './smtp-http-provider.js';
import { auth } from './auth.js';

type Provider = Awaited<ReturnType<typeof startHttpProvider>>;

export interface LostAnswer {
  http: TestEnv;
  provider: Provider;
  accountId: string;
  cardId: string;
  fence: { id: string; idempotency_key: string };
  /** What the HTTP mail API was sent under the fence's key: the lost try and the re-ship. */
  tries: Provider['posts'];
}

/**
 * A mail draft sent through the HTTP mail API whose first answer is lost (the provider takes it and
 * drops the connection): the send answers 503 `delivery_pending`, reconciliation re-ships it under the
 * same key once the provider answers again, and the card ends `sent`. `check` then reads what each try
 * carried. The world (its own env, the shipments pool, the provider) is closed afterwards.
 */
export async function afterLostAnswer(
  env: Record<string, string>,
  draft: { to: string; subject: string; body: string },
  check: (r: LostAnswer) => Promise<void>,
): Promise<void> {
  const provider = await startHttpProvider();
  const http = await setupTestEnv({
    env: {
      ...env,
      MAIL_TRANSPORT: 'http',
      MAIL_API_URL: provider.url,
      MAIL_SEND_TIMEOUT_MS: '2000',
      MAIL_RECONCILE_DELAY_MS: '100',
      MAIL_RECONCILE_WINDOW_MS: '5000',
    },
  });
  const pools = await startPools(http.deps, ['shipments']);
  try {
    provider.state.mode = 'drop-before';
    const { token, accountId } = await http.tenant();
    const card = await buildCard(http.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: draft.to, draft: { subject: draft.subject, body: draft.body } },
    });
    const res = await http.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('delivery_pending');
    provider.state.mode = 'accept';
    await until(async () => (await http.deps.db('review_cards').where({ id: card.id }).first())?.status === 'sent');
    const fence = await http.deps.db('shipments').where({ card_id: card.id }).first();
    const tries = provider.posts.filter((p) => p.key === fence.idempotency_key);
    expect(tries.length).toBe(2);
    await check({ http, provider, accountId, cardId: card.id, fence, tries });
  } finally {
    await pools.close();
    await http.close();
    await provider.close();
  }
}
