import { Forbidden, isInfraError, Unauthorized, Unavailable } from '../../src/errors.js';
import { authenticate } from '../../src/tokens/tokens.service.js';
import type { Principal, Scope } from '../../src/tokens/tokens.types.js';
import type { AppDeps } from '../route-def.js';

/** The scheme is case-insensitive (RFC 9110 §11.1): `bearer x` and `BEARER x` are the same credentials. */
const BEARER = /^Bearer ([^\s]+)$/i;

/** The token of `Authorization: Bearer …`; a missing or malformed header is a 401. */
export function bearerToken(header: string | undefined): string {
  const match = header ? BEARER.exec(header) : null;
  if (!match?.[1]) throw new Unauthorized();
  return match[1];
}

/**
 * Resolves a bearer token fresh on every request: unknown or revoked → 401; Postgres out of reach →
 * 503 (the token could not be checked).
 */
export async function resolvePrincipal(deps: AppDeps, token: string): Promise<Principal> {
  let principal: Principal | null;
  try {
    principal = await authenticate(deps.db, deps.config.tokenPrefix, token);
  } catch (err) {
    if (isInfraError(err)) throw new Unavailable();
    throw err;
  }
  if (!principal) throw new Unauthorized();
  return principal;
}

export const hasScope = (principal: Principal, scope: Scope | null): boolean => !scope || principal.scopes.includes(scope);

export function requireScope(principal: Principal, scope: Scope | null): void {
  if (scope && !hasScope(principal, scope)) throw new Forbidden(scope);
}
