import { describe, expect } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { generateToken, hashToken, isWellFormedToken } from '../../src/tokens/token-format.js';
import { authenticate, lastUsedRecorder, listTokens, mintToken, parseScopes, revokeToken } from '../../src/tokens/tokens.service.js';
import { SCOPES } from '../../src/tokens/tokens.types.js';
import { it } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { row } from '../helpers/rows.js';

describe('token format', () => {
  it('is <prefix>_ then 30 random base62 characters and a 6-character checksum', () => {
    const token = generateToken('gat');
    expect(token).toMatch(/^gat_[0-9A-Za-z]{36}$/);
    expect(isWellFormedToken('gat', token)).toBe(true);
    expect(generateToken('gat')).not.toBe(token);
  });

  it('refuses any single-character change, truncation or foreign prefix by checksum alone', () => {
    const token = generateToken('gat');
    for (let i = 4; i < token.length; i++) {
      const c = token[i] === 'x' ? 'y' : 'x';
      expect(isWellFormedToken('gat', token.slice(0, i) + c + token.slice(i + 1))).toBe(false);
    }
    expect(isWellFormedToken('gat', token.slice(0, -1))).toBe(false);
    expect(isWellFormedToken('ghp', token.replace(/^gat/, 'ghp'))).toBe(false);
  });
});

describe('minting and revoking', () => {
  it('stores only the SHA-256 of the token, never the token', async ({ env }) => {
    const account = await createAccount(env.deps.db, 'Hash Co');
    const { token, tokenId } = await mintToken(env.deps.db, 'gat', { accountId: account.id, label: 'ci', scopes: ['review:read'] });
    const stored = await row(env, 'api_tokens', { id: tokenId });
    expect(stored.token_hash).toBe(hashToken(token));
    expect(JSON.stringify(stored)).not.toContain(token.slice(4));
    expect(await authenticate(env.deps.db, 'gat', token)).toMatchObject({ tokenId, accountId: account.id, scopes: ['review:read'] });
  });

  it('refuses the 21st live token, even when 25 mints race, and allows one again after a revoke', async ({ env }) => {
    const account = await createAccount(env.deps.db, 'Busy Co');
    const results = await Promise.allSettled(
      Array.from({ length: 25 }, (_, i) => mintToken(env.deps.db, 'gat', { accountId: account.id, label: `t${i}`, scopes: [] })),
    );
    const minted = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(minted).toHaveLength(20);
    expect(refused).toHaveLength(5);
    expect(String((refused[0] as PromiseRejectedResult).reason.message)).toMatch(/20 live tokens/);
    const first = (minted[0] as PromiseFulfilledResult<{ tokenId: string }>).value.tokenId;
    await revokeToken(env.deps, first);
    await expect(mintToken(env.deps.db, 'gat', { accountId: account.id, label: 'after', scopes: [] })).resolves.toMatchObject({
      tokenId: expect.any(String),
    });
    const list = await listTokens(env.deps.db, account.id);
    expect(list).toHaveLength(21);
    expect(list.filter((t) => t.revokedAt === null)).toHaveLength(20);
  });

  it('refuses unknown scopes by name and accepts every scope of the table', () => {
    expect(() => parseScopes('review:read,admin:all')).toThrow(/unknown scope admin:all/);
    expect(parseScopes(SCOPES.join(','))).toEqual([...SCOPES]);
  });

  it('keeps lastUsedAt with at most one write a minute per token', async ({ env }) => {
    const account = await createAccount(env.deps.db, 'Used Co');
    const { tokenId } = await mintToken(env.deps.db, 'gat', { accountId: account.id, label: 'u', scopes: [] });
    const touch = lastUsedRecorder(env.deps.db, 60_000);
    const lastUsed = async () => (await listTokens(env.deps.db, account.id))[0]!.lastUsedAt;
    touch(tokenId, 1_000_000);
    await waitFor(async () => (await lastUsed()) === 1_000_000, 'the first use written');
    touch(tokenId, 1_030_000); // within the minute: not written
    // A write the recorder makes after the skipped one, on another token: once it has landed, the skipped one would have too.
    const marker = await mintToken(env.deps.db, 'gat', { accountId: account.id, label: 'marker', scopes: [] });
    touch(marker.tokenId, 1_030_000);
    await waitFor(async () => (await listTokens(env.deps.db, account.id)).some((t) => t.lastUsedAt === 1_030_000), 'the marker written');
    expect((await listTokens(env.deps.db, account.id)).find((t) => t.tokenId === tokenId)!.lastUsedAt).toBe(1_000_000);
    touch(tokenId, 1_061_000);
    await waitFor(
      async () => (await listTokens(env.deps.db, account.id)).find((t) => t.tokenId === tokenId)!.lastUsedAt === 1_061_000,
      'the next minute written',
    );
    expect((await listTokens(env.deps.db, account.id)).find((t) => t.tokenId === tokenId)!.lastUsedAt).toBe(1_061_000);
  });
});
