import type { Request, Response } from 'express';
import { z } from 'zod';
import type { Actor } from '../src/audit/audit.service.js';
import type { AppError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';
import type { Deps } from '../src/deps.js';
import type { Principal, Scope } from '../src/tokens/tokens.types.js';

/** What the API's handlers reach services through: the process's deps without its lifecycle. */
export type AppDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues' | 'limiter' | 'cursorSecret'>;

export interface RouteContext {
  deps: AppDeps;
  /** Present on every bearer route; `null` only on `auth: 'none'` routes. */
  principal: Principal;
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
  /** Aborts when the client goes away (long waits stop early). */
  signal: AbortSignal;
  req: Request;
  res: Response;
}

export interface Reply {
  status?: number;
  /** Sent as JSON; or `json`, text that already is the JSON of the body (rendered by the store). */
  body?: unknown;
  json?: string;
  headers?: Record<string, string>;
}

type AnyObject = z.ZodType<Record<string, unknown>, Record<string, unknown>>;

export interface RouteDef<P extends AnyObject = AnyObject, Q extends AnyObject = AnyObject, B extends z.ZodType = z.ZodType> {
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
  /** 'bearer' (default): token, scope and rate limit apply. 'none': the route authenticates itself. */
  auth?: 'bearer' | 'none';
  scope: Scope | null;
  bucket: 'reads' | 'writes' | 'messages';
  params?: P;
  query?: Q;
  body?: B;
  /** A body the handler reads itself (the router never parses it), described for /openapi.json. */
  documentedBody?: { description: string; schema: z.ZodType };
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
  /** Success statuses and their body schemas. */
  responses: Record<number, { description: string; schema: z.ZodType }>;
  /** Route-specific error statuses beyond those every route of its kind can return. */
  errors?: number[];
  handler: (input: { params: z.output<P>; query: z.output<Q>; body: z.output<B> }, ctx: RouteContext) => Promise<Reply>;
}

/** Identity function that keeps the handler's input typed from the schemas. */
export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(def: RouteDef<P, Q, B>): RouteDef {
  return def as unknown as RouteDef;
}

/** `/api/v1/review/{id}` → `/api/v1/review/:id` */
export function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z]+)\}/g, ':$1');
}

/** The statuses a route can answer, for OpenAPI: its own plus those implied by its shape (spec §4). */
export function errorStatuses(route: RouteDef): number[] {
  const set = new Set(route.errors ?? []);
  if (route.auth !== 'none') {
    set.add(401).add(429).add(503);
    if (route.scope) set.add(403);
  }
  if (route.path.includes('{')) set.add(404);
  if (route.body || route.query) set.add(400);
  set.add(500);
  return [...set].sort();
}
