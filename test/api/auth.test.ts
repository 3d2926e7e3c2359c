import { describe, expect } from 'vitest';
import { MeResponse } from '../../api/routes/me.schemas.js';
import { generateToken } from '../../src/tokens/token-format.js';
import { revokeToken } from '../../src/tokens/tokens.service.js';
import { it } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

function expectUnauthorized(res: { status: number; body: unknown; headers: Record<string, string> }) {
  expect(res.status).toBe(401);
  expect(res.body).toEqual({ error: 'unauthorized' });
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers['www-authenticate']).toBe('Bearer realm="growth-agent"');
}

describe('authentication', () => {
  it('answers 401 unauthorized when the Authorization header is missing', async ({ env }) => {
    expectUnauthorized(await env.api().get('/api/v1/me'));
  });

  it('answers 401 for a malformed header (wrong scheme, extra words, empty token)', async ({ env }) => {
    for (const header of ['Basic abc', 'Bearer', 'Bearer a b', 'Token x', `Bearer${generateToken('gat')}`]) {
      expectUnauthorized(await env.api().get('/api/v1/me').set('Authorization', header));
    }
  });

  it('reads the scheme case-insensitively (RFC 9110): bearer, BEARER and Bearer are the same credentials', async ({ env }) => {
    const { token, tokenId } = await env.tenant();
    for (const scheme of ['bearer', 'BEARER', 'Bearer', 'beaRER']) {
      const res = await env.api().get('/api/v1/me').set('Authorization', `${scheme} ${token}`);
      expect(res.status, scheme).toBe(200);
      expect(MeResponse.parse(res.body).me.tokenId).toBe(tokenId);
    }
  });

  it('answers 401 for a well-formed token that was never minted', async ({ env }) => {
    expectUnauthorized(
      await env
        .api()
        .get('/api/v1/me')
        .set(auth(generateToken('gat'))),
    );
  });

  it('answers 401 for a token whose checksum is wrong (a typo) or that is truncated', async ({ env }) => {
    const { token } = await env.tenant();
    const last = token.at(-1) === 'a' ? 'b' : 'a';
    expectUnauthorized(
      await env
        .api()
        .get('/api/v1/me')
        .set(auth(`${token.slice(0, -1)}${last}`)),
    );
    expectUnauthorized(
      await env
        .api()
        .get('/api/v1/me')
        .set(auth(token.slice(0, -3))),
    );
  });

  it('answers 401 on the very next call after the token is revoked', async ({ env }) => {
    const { token, tokenId } = await env.tenant();
    expect((await env.api().get('/api/v1/me').set(auth(token))).status).toBe(200);
    await revokeToken(env.deps, tokenId);
    expectUnauthorized(await env.api().get('/api/v1/me').set(auth(token)));
  });

  it('answers GET /me for a token with no scopes at all', async ({ env }) => {
    const { token, tokenId, accountId } = await env.tenant([], 'Scopeless Ltd');
    const before = Date.now();
    const res = await env.api().get('/api/v1/me').set(auth(token));
    expect(res.status).toBe(200);
    const { me } = MeResponse.parse(res.body);
    expect(me).toMatchObject({ tokenId, label: 'test', scopes: [], account: { id: accountId, name: 'Scopeless Ltd' } });
    expect(me.lastUsedAt).toBeGreaterThanOrEqual(before);
    expect(me.createdAt).toBeLessThanOrEqual(me.lastUsedAt);
    expect(me.limits).toEqual({
      reads: { perMinute: 300, burst: 600 },
      writes: { perMinute: 60, burst: 120 },
      messages: { perMinute: 30, burst: 60 },
      account: { perMinute: 900, burst: 1800 },
    });
  });
});
