import { peopleRepository } from '../../src/people/people.repository.js';
import type { SignedIn } from '../../src/people/people.types.js';
import { checkScopes, liveTokens, mintToken, revokeToken, scopeList } from '../../src/tokens/tokens.service.js';
import type { HeldToken } from '../../src/tokens/tokens.types.js';
import { defineRoute, type AppDeps, type RouteDef } from '../route-def.js';
import { MintedToken, MintTokenBody, ScopesList, TokenIdParams, TokensList } from './tokens.schemas.js';

/** A member sees and revokes their own tokens; an owner everyone's in the account. */
const holderFilter = (s: SignedIn) => (s.person.role === 'owner' ? undefined : s.person.id);

/** The live tokens the person may see, each with its holder (people are read from their owner, src/people). */
async function tokensFor(deps: AppDeps, s: SignedIn) {
  const [tokens, people] = await Promise.all([
    liveTokens(deps.db, s.account.id, holderFilter(s)),
    peopleRepository(deps.db).list(s.account.id),
  ]);
  const byId = new Map(people.map((p) => [p.id, { id: p.id, name: p.name, email: p.email }]));
  return tokens.map((t: HeldToken) => ({
    tokenId: t.tokenId,
    label: t.label,
    scopes: t.scopes,
    createdAt: t.createdAt,
    lastUsedAt: t.lastUsedAt,
    holder: t.personId ? (byId.get(t.personId) ?? null) : null,
  }));
}

/** Settings, API Tokens: the same mint, limit and revoke as the admin CLI's `token` verbs. */
export const tokenRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/scopes',
    operationId: 'listScopes',
    summary: 'Every scope a token can hold and what it lets the token do',
    auth: 'session',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The scopes', schema: ScopesList } },
  }).handle(async () => ({ body: { items: scopeList() } })),

  defineRoute({
    method: 'get',
    path: '/dashboard/api/tokens',
    operationId: 'listDashboardTokens',
    summary: "Live tokens with their holders: a member's own, or every one for an owner",
    auth: 'session',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'The tokens (never their secrets)', schema: TokensList } },
  }).handle(async (_input, ctx) => ({ body: { items: await tokensFor(ctx.deps, ctx.session!) } })),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/tokens',
    operationId: 'mintDashboardToken',
    summary: 'Mints a token held by the signed-in person; its secret is answered this once',
    auth: 'session',
    scope: null,
    bucket: 'writes',
    body: MintTokenBody,
    errors: [409],
    responses: { 201: { description: 'Minted', schema: MintedToken } },
  }).handle(async ({ body }, ctx) => {
    const s = ctx.session!;
    const minted = await mintToken(
      ctx.deps.db,
      ctx.deps.config.tokenPrefix,
      { accountId: s.account.id, label: body.label, scopes: checkScopes(body.scopes), personId: s.person.id },
      ctx.actor,
    );
    const token = (await tokensFor(ctx.deps, s)).find((t) => t.tokenId === minted.tokenId)!;
    return { status: 201, body: { token, secret: minted.token } };
  }),

  defineRoute({
    method: 'delete',
    path: '/dashboard/api/tokens/{tokenId}',
    operationId: 'revokeDashboardToken',
    summary: "Revokes a token: the person's own, or any of the account's for an owner",
    auth: 'session',
    scope: null,
    bucket: 'writes',
    params: TokenIdParams,
    responses: { 204: { description: 'Revoked (its next API call is a 401)' } },
  }).handle(async ({ params }, ctx) => {
    await revokeToken(ctx.deps, params.tokenId, { actor: ctx.actor, personId: holderFilter(ctx.session!) });
    return { status: 204 };
  }),
];
