/**
 * The one door to the service's dashboard routes (/dashboard/api/…). Same-origin fetch with the session
 * cookie; every non-GET carries the session's CSRF token in X-CSRF-Token. A failed answer becomes an
 * ApiError holding the server's `{ error }` sentence, which the page shows next to its form.
 */

export type Role = 'owner' | 'member';

export interface Session {
  person: { id: string; email: string; name: string; role: Role; totpEnabled: boolean };
  account: { id: string; name: string };
  csrfToken: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: Record<string, unknown>,
    readonly retryAfter: number | null,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** The token every non-GET carries; set from GET /dashboard/api/session and every sign-in. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export const API = '/dashboard/api';

/** A raw body (a picked file) sent as it is, with its own Content-Type; the answer read as `api` reads it. */
export function upload<T>(path: string, file: Blob, contentType: string): Promise<T> {
  return api<T>('POST', path, file, contentType);
}

export async function api<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown, rawType?: string): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = rawType ?? 'application/json';
  if (method !== 'GET' && csrfToken) headers['X-CSRF-Token'] = csrfToken;
  let res: Response;
  try {
    res = await fetch(`${API}${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : rawType ? (body as Blob) : JSON.stringify(body),
    });
  } catch {
    throw new ApiError(0, 'The service could not be reached. Check your connection and try again.', {}, null);
  }
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const obj = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    const message = typeof obj.error === 'string' ? obj.error : `The service answered ${res.status}.`;
    const retry = Number(res.headers.get('Retry-After'));
    throw new ApiError(res.status, message, obj, Number.isFinite(retry) && retry > 0 ? retry : null);
  }
  return parsed as T;
}

/** The sentence to show for a failure: the server's own words, with the wait when it said Retry-After. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.status === 429 && err.retryAfter !== null) return `${err.message} Try again in ${err.retryAfter} s.`;
    return err.message;
  }
  return err instanceof Error ? err.message : String(err);
}
