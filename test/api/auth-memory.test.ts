import request from 'supertest';
import { describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { createRedis, keyspace } from '../../src/redis.js';
import { authGuardKeys } from '../../src/tokens/auth-guard.js';
import { revokeToken } from '../../src/tokens/tokens.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { holdTable } from '../helpers/locks.js';
import { redisAway } from '../helpers/outages.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { row } from '../helpers/rows.js';

// API processes remember resolved tokens; these prove a revocation still holds from the very next call.
const me = (app: Parameters<typeof request>[0], token: string) => request(app).get('/api/v1/me').set(auth(token));

describe('remembered tokens', () => {
  it('are refused by every API process on the very next call after a revocation', async ({ env }) => {
    const { token, tokenId } = await env.tenant();
    // Two API processes' worth of memory: each app builds its own.
    const apps = [env.app, createApp(env.deps)];
    for (const app of apps) for (let i = 0; i < 3; i++) expect((await me(app, token)).status).toBe(200);
    await revokeToken(env.deps, tokenId);
    for (const app of apps) {
      const res = await me(app, token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    }
  });

  it('are asked of Postgres again when Redis lost its data (the epoch is new)', async ({ env }) => {
    const { token, tokenId, accountId } = await env.tenant();
    expect((await me(env.app, token)).status).toBe(200);
    expect((await me(env.app, token)).status).toBe(200);
    // A revocation whose mark was lost with Redis's data: committed in Postgres, no mark, no epoch.
    await env.deps.db('api_tokens').where({ id: tokenId }).update({ revoked_at: Date.now() });
    const keys = authGuardKeys(keyspace(env.config.queuePrefix), accountId, tokenId);
    await env.deps.redis.del(keys.epoch, keys.revoked);
    expect((await me(env.app, token)).status).toBe(401);
  });

  it('refuses a revocation it cannot announce, and leaves the token working', async ({ env }) => {
    const { token, tokenId } = await env.tenant();
    expect((await me(env.app, token)).status).toBe(200);
    const away = createRedis(configWith(redisAway()), 'producer', { retryStrategy: () => null });
    try {
      await expect(revokeToken({ db: env.deps.db, redis: away, config: env.config }, tokenId)).rejects.toMatchObject({ status: 503 });
    } finally {
      away.disconnect();
    }
    expect((await row(env, 'api_tokens', { id: tokenId })).revoked_at).toBeNull();
    expect((await me(env.app, token)).status).toBe(200);
    await revokeToken(env.deps, tokenId);
    expect((await me(env.app, token)).status).toBe(401);
  });

  it('keeps a token unknown to the memory until Postgres has said it is live', async ({ env }) => {
    const { token } = await env.tenant();
    const forged = `${token.slice(0, -8)}AAAAAAAA`;
    expect((await me(env.app, forged)).status).toBe(401);
    expect((await me(env.app, token)).status).toBe(200);
    expect((await me(env.app, forged)).status).toBe(401);
  });

  describe('GET handlers begun beside the limiter', () => {
    const review = (env: TestEnv, token: string) => request(env.app).get('/api/v1/review').set(auth(token));

    it('drop the read when the token was revoked: 401 and no card', async ({ env }) => {
      const { token, tokenId, accountId } = await env.tenant();
      await buildCard(env.deps.db, accountId, 'approval');
      expect((await review(env, token)).body.items).toHaveLength(1);
      expect((await review(env, token)).body.items).toHaveLength(1);
      await revokeToken(env.deps, tokenId);
      const res = await review(env, token);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
    });

    it('write nothing when the token was revoked: a due snoozed card stays snoozed', async ({ env }) => {
      const { token, tokenId, accountId } = await env.tenant();
      expect((await review(env, token)).status).toBe(200);
      expect((await review(env, token)).status).toBe(200);
      const due = await buildCard(env.deps.db, accountId, 'question', { status: 'snoozed', snoozedUntil: Date.now() - 1 });
      await revokeToken(env.deps, tokenId);
      const cards = await holdTable(env.deps.db, 'review_cards');
      let res: Awaited<ReturnType<typeof review>>;
      try {
        const answer = review(env, token).then((r) => r);
        // The handler's read of the queue waits on the lock: it began beside the limiter.
        await cards.blocked();
        await cards.release();
        res = await answer;
      } finally {
        await cards.release();
      }
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: 'unauthorized' });
      // The 401 is answered once the work begun beside the limiter has stopped: nothing can follow.
      expect((await cardsRepository(env.deps.db).find(accountId, due.id))!.status).toBe('snoozed');
    });

    it('never begin for a remembered token that lacks the scope: 403 naming it', async ({ env }) => {
      const { token, accountId } = await env.tenant(['leads:read']);
      await buildCard(env.deps.db, accountId, 'approval');
      expect((await me(env.app, token)).status).toBe(200);
      const res = await review(env, token);
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'review:read' });
    });

    it('still answer 400 naming the field, after the limiter admitted the call', async ({ env }) => {
      const { token } = await env.tenant();
      expect((await review(env, token)).status).toBe(200);
      const res = await request(env.app).get('/api/v1/review?limit=0').set(auth(token));
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/limit/);
    });
  });
});
