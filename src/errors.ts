/**
 * The one error family. Each class is one row of the spec's Errors table; `renderError` in
 * api/middleware/errors.ts turns any of them into `{ error, ...extra }` with its headers.
 */
export abstract class AppError extends Error {
  abstract readonly status: number;
  /** The spec's `error` string. */
  abstract readonly error: string;
  extra(): Record<string, unknown> {
    return {};
  }
  headers(): Record<string, string> {
    return {};
  }
  body(): Record<string, unknown> {
    return { error: this.error, ...this.extra() };
  }
}

/** 400: a sentence for developers naming the field and the rule. */
export class BadRequest extends AppError {
  readonly status = 400;
  constructor(readonly error: string) {
    super(error);
  }
}

/** 413: a body over the route's byte limit. */
export class PayloadTooLarge extends AppError {
  readonly status = 413;
  constructor(readonly error: string) {
    super(error);
  }
}

/** 415: a body of a type the route does not take; the sentence names the type it does. */
export class UnsupportedMediaType extends AppError {
  readonly status = 415;
  constructor(readonly error: string) {
    super(error);
  }
}

export class Unauthorized extends AppError {
  readonly status = 401;
  readonly error = 'unauthorized';
  override headers() {
    return { 'WWW-Authenticate': 'Bearer realm="growth-agent"' };
  }
}

export class Forbidden extends AppError {
  readonly status = 403;
  readonly error = 'forbidden';
  constructor(readonly requiredScope: string) {
    super(`forbidden: needs ${requiredScope}`);
  }
  override extra() {
    return { requiredScope: this.requiredScope };
  }
}

/**
 * 401 from the dashboard: a sentence for the person (not signed in, wrong password, a code needed) and any
 * fields the page acts on (`codeRequired`). No WWW-Authenticate: the dashboard takes a cookie, not a scheme.
 */
export class SignInRefused extends AppError {
  readonly status = 401;
  constructor(
    readonly error: string,
    private readonly more: Record<string, unknown> = {},
  ) {
    super(error);
  }
  override extra() {
    return { ...this.more };
  }
}

/** 403 with a sentence: an owner-only dashboard route, a request from another site, a wrong password to confirm. */
export class NotAllowed extends AppError {
  readonly status = 403;
  constructor(readonly error: string) {
    super(error);
  }
}

/** 403 from Bull Board while ADMIN_READ_ONLY is on: nothing that changes a job or a queue runs. */
export class BoardReadOnly extends AppError {
  readonly status = 403;
  readonly error = 'the queue board is read-only; an operator sets ADMIN_READ_ONLY=false to retry, promote, clean, edit or delete jobs';
}

export class NotFound extends AppError {
  readonly status = 404;
  readonly error = 'not found';
}

/** 409: the card no longer accepts that verb; `actions` is what it accepts now. */
export class InvalidAction extends AppError {
  readonly status = 409;
  readonly error = 'invalid_action';
  constructor(readonly actions: string[]) {
    super('invalid_action');
  }
  override extra() {
    return { actions: this.actions };
  }
}

export class UseSend extends AppError {
  readonly status = 409;
  readonly error = 'use_send';
  constructor(
    override readonly message: string,
    readonly actions: string[],
  ) {
    super(message);
  }
  override extra() {
    return { message: this.message, actions: this.actions };
  }
}

/** 409: a settled refusal; the message says why. Extra fields (for example `notSent`) ride along. */
export class Rejected extends AppError {
  readonly status = 409;
  readonly error = 'rejected';
  constructor(
    override readonly message: string,
    private readonly more: Record<string, unknown> = {},
  ) {
    super(message);
  }
  override extra() {
    return { message: this.message, ...this.more };
  }
}

export class Unsubscribed extends AppError {
  readonly status = 409;
  readonly error = 'this address unsubscribed and cannot be unblocked';
}

export class RateLimited extends AppError {
  readonly status = 429;
  readonly error = 'rate limited';
  constructor(readonly retryAfterSeconds: number) {
    super('rate limited');
  }
  override headers() {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/** 429 with a sentence naming the cap reached (open live streams), and Retry-After. */
export class CapReached extends AppError {
  readonly status = 429;
  constructor(
    readonly error: string,
    readonly retryAfterSeconds: number,
  ) {
    super(error);
  }
  override headers() {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/** 502: recorded, but the work could not be handed on (webhook intake). */
export class BadGateway extends AppError {
  readonly status = 502;
  constructor(readonly error: string) {
    super(error);
  }
}

/** 503: Postgres or Redis could not be reached; the same call can be retried unchanged. */
export class Unavailable extends AppError {
  readonly status = 503;
  readonly error = 'temporarily unavailable';
  constructor(readonly retryAfterSeconds = 5) {
    super('temporarily unavailable');
  }
  override headers() {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

/** 503 for mail sends: `delivery_pending` (answer lost, fenced) or `unavailable` (provider down). */
export class MailNotSettled extends AppError {
  readonly status = 503;
  constructor(
    readonly error: 'delivery_pending' | 'unavailable',
    override readonly message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
  override extra() {
    return { message: this.message };
  }
  override headers() {
    return { 'Retry-After': String(this.retryAfterSeconds) };
  }
}

export class ServerMisconfigured extends AppError {
  readonly status = 500;
  readonly error = 'server misconfigured';
}

const infraCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
]);

/** True when the fault is Postgres or Redis being out of reach: the caller may retry unchanged. */
export function isInfraError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (infraCodes.has(code) || code.startsWith('08'))) return true;
  const name = err.name;
  if (name === 'KnexTimeoutError' || name === 'MaxRetriesPerRequestError') return true;
  const msg = err.message;
  return (
    msg.includes('Connection is closed') ||
    msg.includes("Stream isn't writeable") ||
    msg.includes('Connection terminated') ||
    // pg's connect after connectionTimeoutMillis (a server that takes the connection and never answers).
    msg === 'timeout expired' ||
    msg.includes('Client was closed and is not queryable') ||
    msg.includes('Command timed out') ||
    msg.includes('connect ECONNREFUSED') ||
    msg.includes('Client has encountered a connection error')
  );
}
