/** Every scope a token can hold: the spec's scope table, the two write scopes its routes name, and the Content API's and Measurement's. */
export const SCOPES = [
  'review:read',
  'review:write',
  'agent:message',
  'results:read',
  'leads:read',
  'workflows:write',
  'leads:write',
  // A website's server reads published posts; a server reports visits and conversions.
  'content:read',
  'measurement:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * What each scope lets a token do, in the words of the spec's scope table (and, for the scopes it does
 * not list, of the routes that name them): the one list the dashboard's token form and /openapi.json show.
 */
export const SCOPE_DESCRIPTIONS: Record<Scope, string> = {
  'review:read': 'see what is waiting for approval',
  'review:write': 'approve, answer, send, request changes, snooze, dismiss',
  'agent:message': 'message the agent and read its replies and thread',
  'results:read': 'read results, workflows and agent status',
  'leads:read': 'read leads, contacts and the block list',
  'workflows:write': 'create, change and delete workflows',
  'leads:write': 'label leads and add block list entries',
  'content:read': "read the published posts (a website's server)",
  'measurement:write': 'report visits and conversions (a server)',
};

export const MAX_LIVE_TOKENS = 20;

/** The caller of an API request, resolved fresh from Postgres on every request. */
export interface Principal {
  tokenId: string;
  label: string;
  scopes: Scope[];
  createdAt: number;
  lastUsedAt: number | null;
  accountId: string;
  accountName: string;
  /** The person the caller acts for: a dashboard session's person, or the person holding the token; null for an operator's token. */
  personId: string | null;
  /** How the caller authenticated: a bearer token (`/api/v1`) or a dashboard session (`/dashboard/api/v1`). */
  via: 'token' | 'session';
}

export interface TokenSummary {
  tokenId: string;
  label: string;
  scopes: Scope[];
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** A live token with the dashboard person who holds it (null: an operator minted it with the admin CLI). */
export interface HeldToken extends Omit<TokenSummary, 'revokedAt'> {
  personId: string | null;
}
