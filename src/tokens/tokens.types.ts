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
