/**
 * The API's bearer auth, one way for every test: `.set(auth(token))` for supertest and fetch headers,
 * `bearer(token)` where the header's value is wanted alone (`.set('Authorization', bearer(token))`).
 */
export const bearer = (token: string): string => `Bearer ${token}`;

export const auth = (token: string): { Authorization: string } => ({ Authorization: bearer(token) });
