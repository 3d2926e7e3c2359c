import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Actor } from '../src/audit/audit.service.js';
import type { AppError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';
import type { ShipRules } from '../src/shipping/hold-rule.js';
import type { Deps } from '../src/deps.js';
import type { SignedIn } from '../src/people/people.types.js';
import type { Principal, Scope } from '../src/tokens/tokens.types.js';
import type { QueueVersion } from '../src/queue-version/keys.js';

/** What the API's handlers reach services through: the process's deps without its lifecycle. */
/** What the process hands the API: its deps. */
export type ProcessDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues' | 'limiter' | 'cursorSecret'>;

/** What a route sees: the process's deps and the shipping path's rules (src/shipping/hold-rule.ts), handed by createApp. */
export type AppDeps = ProcessDeps & ShipRules;

export interface RouteContext {
  deps: AppDeps;
  /**
   * Present on every bearer and session route; `null` only on `auth: 'none'` routes. A session's principal
   * holds every scope its role grants, `via: 'session'`, its person, and the session's row id as `tokenId`.
   */
  principal: Principal;
  /** The signed-in person of a dashboard session route (`auth: 'session'`); null on every other route. */
  session: SignedIn | null;
  /** Who this request writes as, for the audit log (`auditedWrite(db, ctx.actor, …)`). */
  actor: Actor;
  requestId: string;
  log: Logger;
  /**
   * Awaited by a GET handler before any write (waking a due snoozed card): a GET may begin beside the
   * limiter, and this resolves once the call is admitted, or rejects when it is refused (the work is
   * dropped). Resolved at once for every other request.
   */
  beforeWrite: () => Promise<void>;
  /**
   * The account's review-queue version as the limiter reported it for this call (src/queue-version/):
   * resolves once the limiter has answered; null when it could not be reached, the call was not
   * admitted, or the route has no bearer token.
   */
  queueVersion: () => Promise<QueueVersion | null>;
  /** Aborts when the client goes away (long waits stop early). */
  signal: AbortSignal;
  req: Request;
  res: Response;
}

/**
 * What the router sends: JSON of `body`, or `json`, text that already is the JSON of the body (rendered by
 * the store), or `text` of the declared response's `contentType` (a feed); nothing for a response declared
 * without a schema (304).
 */
export interface Reply {
  status?: number;
  body?: unknown;
  /** JSON text, or its UTF-8 bytes (a page kept in memory is sent without encoding it again). */
  json?: string | Buffer;
  text?: string;
  /** A list sends the header once per value (two cookies set by one reply). */
  headers?: Record<string, string | string[]>;
}

/**
 * One success status: a JSON body of `schema`; with `contentType`, text of that media type (`schema`
 * documents it: `z.string()`); without `schema`, no body at all (304 Not Modified).
 */
export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  contentType?: string;
  /** Headers the reply carries that a client acts on (ETag), documented in /openapi.json. */
  headers?: z.ZodObject;
}

/** Success statuses and what each one's body is. */
export type Responses = Record<number, ResponseSpec>;

type AnyObject = z.ZodType<Record<string, unknown>, Record<string, unknown>>;
type Part<S> = S extends z.ZodType ? z.output<S> : Record<never, never>;

/** A handler's parsed input, typed from the route's own schemas (an absent schema is an empty part). */
export interface Input<P, Q, B> {
  params: Part<P>;
  query: Part<Q>;
  body: B extends z.ZodType ? z.output<B> : undefined;
}

/**
 * A body of the schema's (input) type, or `json` text rendered by the store: text cannot be checked
 * by the compiler, so the router checks it against the schema at run time when CHECK_RESPONSES is on.
 */
type Payload<T> = { body: T; json?: never; text?: never } | { json: string | Buffer; body?: never; text?: never };
type Headers = { headers?: Record<string, string | string[]> };
/** What a declared response carries: text of its media type, JSON of its schema, or nothing. */
type PayloadOf<E> = E extends { contentType: string }
  ? { text: string; body?: never; json?: never }
  : E extends { schema: infer S extends z.ZodType }
    ? Payload<z.input<S>>
    : { body?: never; json?: never; text?: never };

/** One of the route's declared success replies; `status` may be left out only when 200 is one. */
export type ReplyTo<R extends Responses> =
  | { [S in keyof R & number]: { status: S } & Headers & PayloadOf<R[S]> }[keyof R & number]
  | (200 extends keyof R ? { status?: undefined } & Headers & PayloadOf<R[200]> : never);

/** What the router, the scope check, the limiter and /openapi.json read: everything but the handler. */
interface RouteShape {
  /**
   * A `get` handler only reads (an idempotent repair at most, after `ctx.beforeWrite()`): the router may
   * run it beside the limiter and drop it.
   */
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI form: `/api/v1/review/{id}`. */
  path: string;
  /**
   * The operation's stable name in /openapi.json (generated clients name their methods after it):
   * camelCase, a verb then what it acts on (`listReviewCards`, `sendReviewCard`). Never renamed.
   */
  operationId: string;
  summary: string;
  /**
   * 'bearer' (default): token, scope and rate limit apply (`/api/v1`). 'session': a dashboard route, the
   * `gas_session` cookie, CSRF on every non-GET, the rate limit keyed on the session. 'none': the route
   * authenticates itself (on the dashboard, its non-GETs still pass the Origin rule).
   */
  auth?: 'bearer' | 'none' | 'session';
  /** A session route only an account owner may call (a member gets 403 naming the rule). */
  role?: 'owner';
  scope: Scope | null;
  bucket: 'reads' | 'writes' | 'messages';
  /**
   * Request headers the handler reads itself from `ctx.req.headers` (If-None-Match), documented in
   * /openapi.json so generated clients can send them; the router does not parse them.
   */
  requestHeaders?: z.ZodObject;
  /** A body the handler reads itself (the router never parses it), described for /openapi.json. */
  documentedBody?: { description: string; schema: z.ZodType /** Default `application/json`. */; contentType?: string };
  /**
   * How the body is read. Default: JSON up to 1 MB (routes with a `body` schema). `raw` hands the
   * handler the bytes (`ctx.req.body` is a Buffer) for routes that judge the body themselves; the
   * limit is enforced while reading, so an oversized body is refused without being read whole (413).
   */
  bodyParser?: { kind: 'json' | 'raw'; limitBytes: number };
  /**
   * Lets a route add to the 400 (or 409) its body's validation gave, before it is answered:
   * `POST /agent/messages` names the unfinished earlier message when `interrupt` is false.
   */
  onInvalidBody?: (error: AppError, body: unknown, ctx: RouteContext) => Promise<AppError>;
  /** Route-specific error statuses beyond those every route of its kind can return. */
  errors?: number[];
  /**
   * The 400s no schema can state because they depend on what is stored or on the clock (a cursor this
   * route did not sign, a snooze time already past): each the start of the `error` sentence, listed in
   * /openapi.json as `x-state-rules`. Every other 400 is a rule of the route's schemas.
   */
  stateRules?: string[];
  /** The body's byte limit when the handler reads it itself (documentedBody); else bodyParser's, else 1 MiB. */
  maxBodyBytes?: number;
}

/** A route's declaration: everything the table reads, with the schemas its handler's types come from. */
export interface RouteSpec<
  P extends AnyObject | undefined,
  Q extends AnyObject | undefined,
  B extends z.ZodType | undefined,
  R extends Responses,
> extends RouteShape {
  params?: P;
  query?: Q;
  body?: B;
  /** Success statuses and their body schemas. */
  responses: R;
}

/** A handler typed from its route's schemas: parsed input in, one of the declared replies out. */
export type Handler<P, Q, B, R extends Responses> = (input: Input<P, Q, B>, ctx: RouteContext) => Promise<ReplyTo<R>>;

/** A route in the table, its types checked where it was declared (the table holds every kind). */
export interface RouteDef extends RouteShape {
  params?: AnyObject;
  query?: AnyObject;
  body?: z.ZodType;
  /** Success statuses and their body schemas (the router checks replies against them under CHECK_RESPONSES). */
  responses: Responses;
  handler: (input: { params: Record<string, unknown>; query: Record<string, unknown>; body: unknown }, ctx: RouteContext) => Promise<Reply>;
}

/**
 * Declares a route, typed end to end: `defineRoute({ ...schemas }).handle(async (input, ctx) => reply)`.
 * `input.params/query/body` are the schemas' outputs, and the reply must be one of `responses` (status and
 * body type). The handler is given in a second call so the schemas' types are settled before its body is
 * checked: inside one generic call TypeScript widens literals in the reply (`ok: true`) first.
 */
export function defineRoute<
  R extends Responses,
  P extends AnyObject | undefined = undefined,
  Q extends AnyObject | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<P, Q, B, R>): { handle(handler: Handler<P, Q, B, R>): RouteDef } {
  // Sound by construction: the router parses each part with the very schema the input type comes from.
  return { handle: (handler) => ({ ...spec, handler }) as unknown as RouteDef };
}

/** The statuses a route can answer, for OpenAPI: its own plus those implied by its shape (spec §4). */
export function errorStatuses(route: RouteDef): number[] {
  // Any request may be refused before it reaches a route: 400 (not HTTP), 408 (not sent within
  // HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS) and 431 (headers over 16 KiB).
  const set = new Set([...(route.errors ?? []), 400, 408, 431]);
  if (route.auth !== 'none') {
    set.add(401).add(429).add(503);
    if (route.scope) set.add(403);
  }
  if (route.path.includes('{')) set.add(404);
  // Every JSON body is read up to a byte limit (1 MiB unless the route says otherwise): over it is a 413.
  if (route.body || route.bodyParser || route.documentedBody) set.add(413);
  set.add(500);
  return [...set].sort();
}
