import { getAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite } from '../audit/audit.service.js';
import type { Config } from '../config.js';
import type { Db, Queryable } from '../db.js';
import { keyspace, type Redis } from '../redis.js';
import { markRevoked } from './auth-guard.js';
import { BadRequest, NotFound, Rejected } from '../errors.js';
import { newId } from '../ids.js';
import { generateToken, hashToken, isWellFormedToken } from './token-format.js';
import { tokensRepository } from './tokens.repository.js';
import { MAX_LIVE_TOKENS, SCOPES, type Principal, type Scope, type TokenSummary } from './tokens.types.js';

/** Reads a comma-separated scope list; an unknown scope is refused by name. */
export function parseScopes(list: string): Scope[] {
  const wanted = [
    ...new Set(
      list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = wanted.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw new BadRequest(`unknown scope ${unknown.join(', ')}; scopes are ${SCOPES.join(', ')}`);
  return wanted as Scope[];
}

/**
 * Mints a token and returns its secret, the only time it is ever seen. The account row is locked so
 * two concurrent mints cannot both pass the 20-live-tokens check.
 */
export async function mintToken(
  db: Db,
  prefix: string,
  input: { accountId: string; label: string; scopes: Scope[] },
): Promise<{ token: string; tokenId: string }> {
  const label = input.label.trim();
  if (!label || label.length > 100) throw new BadRequest('label must be 1 to 100 characters');
  return auditedWrite(db, adminActor(input.accountId, 'token mint'), async (trx) => {
    await getAccount(trx, input.accountId, true);
    const repo = tokensRepository(trx);
    if ((await repo.countLive(input.accountId)) >= MAX_LIVE_TOKENS) {
      throw new Rejected(`account already has ${MAX_LIVE_TOKENS} live tokens; revoke one before minting another`);
    }
    const token = generateToken(prefix);
    const tokenId = newId('tok');
    await repo.insert({
      id: tokenId,
      accountId: input.accountId,
      label,
      scopes: input.scopes,
      hash: hashToken(token),
      createdAt: Date.now(),
    });
    return { result: { token, tokenId }, targetId: tokenId };
  });
}

/**
 * Revokes a token; revoking one already revoked is a no-op success. Unknown id → NotFound. The mark that
 * makes every API process forget the token is set first (auth-guard.ts); Redis out of reach →
 * Unavailable and nothing is revoked.
 */
export async function revokeToken(deps: { db: Db; redis: Redis; config: Pick<Config, 'queuePrefix'> }, tokenId: string): Promise<void> {
  const { db } = deps;
  const found = await tokensRepository(db).find(tokenId);
  if (!found) throw new NotFound();
  if (found.revokedAt !== null) return;
  await markRevoked(deps.redis, keyspace(deps.config.queuePrefix), found.accountId, tokenId);
  await auditedWrite(db, adminActor(found.accountId, 'token revoke'), async (trx) => {
    await tokensRepository(trx).revoke(tokenId, Date.now());
    return { result: undefined, targetId: tokenId };
  });
}

/**
 * Revokes every live token the person holds, inside the caller's transaction (a person's removal), after
 * marking each revoked in Redis so every API process forgets it first (as `revokeToken` does). Answers the ids.
 */
export async function revokeTokensHeldBy(
  deps: { redis: Redis; config: Pick<Config, 'queuePrefix'> },
  trx: Queryable,
  accountId: string,
  personId: string,
  at = Date.now(),
): Promise<string[]> {
  const repo = tokensRepository(trx);
  const ids = await repo.liveHeldBy(accountId, personId);
  for (const id of ids) {
    await markRevoked(deps.redis, keyspace(deps.config.queuePrefix), accountId, id);
    await repo.revoke(id, at);
  }
  return ids;
}

export async function listTokens(db: Db, accountId: string): Promise<TokenSummary[]> {
  await getAccount(db, accountId);
  return tokensRepository(db).list(accountId);
}

/**
 * Resolves a bearer token from Postgres (API processes remember the answer under auth-guard.ts's rules).
 * A malformed token or bad checksum is refused without touching the database.
 */
export async function authenticate(db: Db, prefix: string, token: string): Promise<Principal | null> {
  if (!isWellFormedToken(prefix, token)) return null;
  return tokensRepository(db).findLiveByHash(hashToken(token));
}

/** Whether an API token is still live (not revoked): a waiting request checks before it answers. */
export function tokenLive(db: Db, tokenId: string): Promise<boolean> {
  return tokensRepository(db).isLive(tokenId);
}

/**
 * Keeps `lastUsedAt` without a database write per request: each process writes a token's time at
 * most once a minute, in the background; a failed write is only a staler timestamp.
 */
export function lastUsedRecorder(db: Db, intervalMs = 60_000) {
  const written = new Map<string, number>();
  return (tokenId: string, at: number): void => {
    const last = written.get(tokenId);
    if (last !== undefined && at - last < intervalMs) return;
    written.set(tokenId, at);
    if (written.size > 10_000) written.clear();
    tokensRepository(db)
      .touch(tokenId, at)
      .catch(() => written.delete(tokenId));
  };
}
