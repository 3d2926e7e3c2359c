import express, { type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import { AppError, BadRequest, NotFound, SignInRefused } from '../src/errors.js';
import { Admission } from './admission.js';
import type { Logger } from '../src/logger.js';
import type { Principal } from '../src/tokens/tokens.types.js';
import { lastUsedRecorder } from '../src/tokens/tokens.service.js';
import { PrincipalMemory } from '../src/tokens/auth-guard.js';
import { hashToken } from '../src/tokens/token-format.js';
import { bearerToken, hasScope, requireScope, resolvePrincipal } from './middleware/auth.js';
import { admitSession, BEARER_REFUSED, checkOrigin, type SessionExtra, type SessionMemory } from './middleware/session.js';
import { type SessionSeenRecorder, sessionSeenRecorder } from '../src/people/sessions.service.js';
import type { SignedIn } from '../src/people/people.types.js';
import { applyLimit, spend, type Spent } from './middleware/rate-limit.js';
import { parsePart } from './middleware/validate.js';
import { DEPTH_RULE, deeperThan, storableText, textRuleSentence, unstorablePath } from './middleware/json-rules.js';
import type { QueueVersion } from '../src/queue-version/keys.js';
import { RouteTable } from './dispatch.js';
import { markRoute, RouteSeries } from './middleware/http-metrics.js';
import type { AppDeps, Reply, RouteContext, RouteDef } from './route-def.js';
import { DEFAULT_JSON_LIMIT } from './request-rules.js';

/** The order every request goes through: authenticate, limit, check scope, read the body, validate, handle. */

/** A GET handler started beside the limiter, on a remembered token; awaited only once admitted. */
type Early = (principal: Principal, beforeWrite: () => Promise<void>, queueVersion: () => Promise<QueueVersion | null>) => Promise<Reply>;

/**
 * Authenticates and spends from the rate limit: 401/503 first, then 429 (or 503 for writes). A token
 * this process resolved before is trusted on the limiter script's word (no Postgres round trip); a mark,
 * a new epoch, or Redis out of reach sends it back to Postgres (src/tokens/auth-guard.ts). With `early`
 * (GET routes), a remembered token that has the route's scope, and had room left in the bucket on its
 * last call, starts the handler while the limiter decides. That work only reads until `admission`
 * admits the call; when the call is refused (or the token is sent back to Postgres) it is dropped
 * unseen and never writes. Also answers the account's review-queue version the limiter reported (null
 * when it could not be reached), for the handler's page cache.
 */
async function admit(
  route: RouteDef,
  deps: AppDeps,
  memory: PrincipalMemory,
  req: Request,
  res: Response,
  admission: Admission,
  early?: Early,
): Promise<{ principal: Principal; started?: Promise<Reply>; queue: QueueVersion | null }> {
  const token = bearerToken(req.headers.authorization);
  const hash = hashToken(token);
  const now = Date.now();
  const known = memory.get(hash, now);
  let spent: Spent | null = null;
  if (known) {
    // Only while its last call left room: the limiter must still spare the database a caller it refuses.
    const roomy = (known.left[route.bucket] ?? 0) >= 1;
    const started =
      early && roomy && hasScope(known.principal, route.scope)
        ? admission.begin(early(known.principal, admission.beforeWrite, admission.queueVersion))
        : undefined;
    spent = await spend(deps, known.principal, route.bucket);
    if (!('unavailable' in spent) && !spent.guard.revoked && spent.guard.epoch === known.epoch) {
      known.left[route.bucket] = spent.remaining;
      applyLimit(spent, route.bucket, res);
      admission.admit(spent.queue);
      return { principal: known.principal, started, queue: spent.queue };
    }
    memory.forget(hash);
    // Refused before Postgres is asked: whatever Postgres says, the begun work is not this call's.
    void admission.refuse();
  }
  const principal = await resolvePrincipal(deps, token);
  spent ??= await spend(deps, principal, route.bucket);
  if ('unavailable' in spent) memory.forgetAll();
  else if (!spent.guard.revoked) memory.remember(hash, principal, spent.guard.epoch, now).left[route.bucket] = spent.remaining;
  applyLimit(spent, route.bucket, res);
  return { principal, queue: 'unavailable' in spent ? null : spent.queue };
}

/** Which front door a table is mounted at: the personal-token API, or the dashboard (cookie sessions, CSRF). */
export type Door = 'api' | 'dashboard';

function runner(
  route: RouteDef,
  deps: AppDeps,
  touch: (tokenId: string, at: number) => void,
  memory: PrincipalMemory,
  door: Door,
  sessions: { memory: SessionMemory; seen: SessionSeenRecorder },
): RequestHandler {
  const readBody = bodyParserFor(route);
  const series = new RouteSeries(route.path);
  return async (req, res) => {
    markRoute(res, series);
    const handle = async (
      principal: Principal | null,
      beforeWrite: () => Promise<void>,
      queueVersion: () => Promise<QueueVersion | null>,
    ): Promise<Reply> => {
      const ctx = context(route, deps, principal, session, req, res, beforeWrite, queueVersion);
      // An id Postgres cannot hold names nothing of ours: 404, as any unknown id.
      for (const v of Object.values(req.params ?? {})) if (typeof v === 'string' && !storableText(v)) throw new NotFound();
      const input = {
        params: route.params ? parsePart(route.params, req.params, 'params') : {},
        query: route.query ? parseQuery(route.query, req.query ?? {}) : {},
        body: route.body ? await parseBody(route, route.body, req.body, ctx) : undefined,
      };
      return route.handler(input, ctx);
    };
    let principal: Principal | null = null;
    let session: SignedIn | null = null;
    let started: Promise<Reply> | undefined;
    let queue: QueueVersion | null = null;
    const admission = new Admission();
    if (door === 'dashboard') {
      // Never a bearer token on the dashboard, and every write from this site only (docs/dashboard.md, "CSRF").
      if (req.headers.authorization !== undefined) throw new SignInRefused(BEARER_REFUSED);
      if (route.method !== 'get') checkOrigin(req, deps.config);
    }
    if (route.auth === 'session') {
      ({ session, principal, queue } = await admitSession(deps, sessions.memory, sessions.seen, req, res, route));
      requireScope(principal, route.scope);
    } else if (route.auth !== 'none') {
      try {
        ({ principal, started, queue } = await admit(
          route,
          deps,
          memory,
          req,
          res,
          admission,
          route.method === 'get' && !readBody ? handle : undefined,
        ));
      } catch (err) {
        // The refusal is answered once the work begun beside the limiter has stopped (it cannot write).
        await admission.refuse();
        throw err;
      }
      touch(principal.tokenId, Date.now());
      requireScope(principal, route.scope);
    }
    // Read only once the caller is known to be allowed: a stranger cannot make us read a body.
    if (readBody) await new Promise<void>((resolve, reject) => readBody(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    const reply = await (started ?? handle(principal, Admission.open, () => Promise.resolve(queue)));
    // Work begun and then dropped (the token went back to Postgres) ends before the answer does.
    if (!started) await admission.refuse();
    if (res.headersSent) return;
    if (deps.config.checkResponses) checkReply(route, reply, req.log);
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
    const status = reply.status ?? 200;
    const declared = route.responses[status];
    res.status(status);
    if (reply.text !== undefined) res.type(declared?.contentType ?? 'text/plain').send(reply.text);
    else if (declared && !declared.schema) res.end();
    else if (reply.json === undefined) res.json(reply.body);
    else res.type('application/json').send(reply.json);
  };
}

/**
 * CHECK_RESPONSES (tests): a success reply must be one of the route's declared statuses, and its JSON
 * as sent (store-rendered text included) must parse with that status's schema. A mismatch is a 500 and
 * an error log naming the route and the first issue: the docs and the code have drifted apart.
 */
function checkReply(route: RouteDef, reply: Reply, log: Logger): void {
  const status = reply.status ?? 200;
  if ((status < 200 || status > 299) && status !== 304) return;
  const declared = route.responses[status];
  const where = `${route.method.toUpperCase()} ${route.path} (${route.operationId}) ${status}`;
  function fail(problem: string): never {
    const message = `reply of ${where} does not match its response schema: ${problem}`;
    const fields = { route: route.path, method: route.method, operationId: route.operationId, status, problem };
    log.error(fields, 'reply does not match its response schema');
    // Also on stderr: test apps log nothing (LOG_LEVEL=silent), and this must not pass unseen.
    process.emitWarning(message, 'ResponseSchemaMismatch');
    throw new Error(message);
  }
  if (!declared) fail(`status ${status} is not among the declared responses (${Object.keys(route.responses).join(', ')})`);
  if (!declared.schema) {
    if (reply.body !== undefined || reply.json !== undefined || reply.text !== undefined) fail('a reply declared without a body has one');
    return;
  }
  if (declared.contentType) {
    if (reply.text === undefined) fail(`not ${declared.contentType} text`);
    const text = declared.schema.safeParse(reply.text);
    if (!text.success) fail(`text: ${text.error.issues[0]?.message ?? 'not valid'}`);
    return;
  }
  if (reply.text !== undefined) fail('text where JSON is declared');
  const schema = declared.schema;
  let sent: unknown;
  try {
    sent = reply.json === undefined ? JSON.parse(JSON.stringify(reply.body ?? null)) : JSON.parse(String(reply.json));
  } catch (err) {
    fail(`not JSON: ${(err as Error).message}`);
  }
  const result = schema.safeParse(sent);
  if (!result.success) {
    const issue = result.error.issues[0];
    fail(issue ? `${issue.path.map(String).join('.') || '(body)'}: ${issue.message} (${issue.code})` : 'not valid');
  }
  const extra = undocumented(sent, result.data, '');
  if (extra) fail(`${extra}: the reply carries a field the schema does not document`);
}

/** The first field of `sent` that parsing dropped (a non-strict object strips what it does not name), or null. */
function undocumented(sent: unknown, parsed: unknown, path: string): string | null {
  if (Array.isArray(sent) && Array.isArray(parsed)) {
    for (let i = 0; i < sent.length; i++) {
      const found = undocumented(sent[i], parsed[i], `${path}${path ? '.' : ''}${i}`);
      if (found) return found;
    }
    return null;
  }
  if (!sent || typeof sent !== 'object' || !parsed || typeof parsed !== 'object') return null;
  for (const [key, value] of Object.entries(sent)) {
    const at = `${path}${path ? '.' : ''}${key}`;
    if (!(key in parsed)) return at;
    const found = undocumented(value, (parsed as Record<string, unknown>)[key], at);
    if (found) return found;
  }
  return null;
}

/** The query by its schema, then the edge's text rule on what the handler gets (api/middleware/json-rules.ts). */
function parseQuery(schema: z.ZodType, query: unknown): Record<string, unknown> {
  const parsed = parsePart(schema, query, 'query') as Record<string, unknown>;
  const bad = unstorablePath(parsed);
  if (bad !== null) throw new BadRequest(textRuleSentence(bad, 'query'));
  return parsed;
}

/**
 * The body: its nesting first (before any recursive reader sees it), then its schema, then the text rule
 * on what the handler gets, so a schema's own wording (and a route's per-item verdicts) come first.
 */
async function parseBody(route: RouteDef, schema: z.ZodType, body: unknown, ctx: RouteContext): Promise<unknown> {
  try {
    if (deeperThan(body)) throw new BadRequest(`body ${DEPTH_RULE}`);
    const parsed = parsePart(schema, body, 'body');
    const bad = unstorablePath(parsed);
    if (bad !== null) throw new BadRequest(textRuleSentence(bad, 'body'));
    return parsed;
  } catch (err) {
    if (route.onInvalidBody && err instanceof AppError) throw await route.onInvalidBody(err, body, ctx);
    throw err;
  }
}

function context(
  route: RouteDef,
  deps: AppDeps,
  principal: Principal | null,
  session: SignedIn | null,
  req: Request,
  res: Response,
  beforeWrite: () => Promise<void>,
  queueVersion: () => Promise<QueueVersion | null>,
): RouteContext {
  let abort: AbortController | undefined;
  return {
    deps,
    beforeWrite,
    queueVersion,
    principal: principal as Principal,
    session,
    // A session writes as its person (its row id where a token's would be); a token a person holds, as that person too.
    actor: session
      ? {
          accountId: session.account.id,
          actor: 'person',
          tokenId: session.sessionId,
          tokenLabel: null,
          method: route.method.toUpperCase(),
          route: route.path,
          personId: session.person.id,
          personEmail: session.person.email,
          personName: session.person.name,
        }
      : {
          accountId: principal?.accountId ?? '',
          actor: 'api',
          tokenId: principal?.tokenId ?? null,
          tokenLabel: principal?.label ?? null,
          method: route.method.toUpperCase(),
          route: route.path,
          personId: principal?.personId ?? null,
        },
    requestId: String(req.id),
    get log() {
      return req.log;
    },
    // Made on first use: most handlers never wait on anything the client could abandon.
    get signal() {
      if (!abort) {
        const controller = new AbortController();
        abort = controller;
        // req.destroyed is already true once a body was read (Node 20): ask the socket instead.
        if (res.writableEnded || req.socket.destroyed) controller.abort();
        else res.once('close', () => controller.abort());
      }
      return abort.signal;
    },
    req,
    res,
  };
}

/** The route's body reader, or none when it takes no body. */
function bodyParserFor(route: RouteDef): RequestHandler | null {
  if (route.bodyParser?.kind === 'raw') return express.raw({ type: () => true, limit: route.bodyParser.limitBytes });
  if (route.body || route.bodyParser) return express.json({ limit: route.bodyParser?.limitBytes ?? DEFAULT_JSON_LIMIT, strict: false });
  return null;
}

/**
 * The route table as one middleware (api/dispatch.ts): a request no route matches goes on to the 404.
 * Express 5 forwards a rejected promise to the error handler.
 */
export function buildRouter(routes: RouteDef[], deps: AppDeps, door: Door = 'api'): RequestHandler {
  const table = new RouteTable<RequestHandler>();
  const touch = lastUsedRecorder(deps.db);
  const memory = new PrincipalMemory();
  const sessions = { memory: new PrincipalMemory<SessionExtra>(), seen: sessionSeenRecorder(deps.db) };
  for (const route of routes) {
    if (door === 'api' && route.auth === 'session') throw new Error(`${route.path}: a session route belongs to the dashboard's table`);
    table.add(route.method, route.path, runner(route, deps, touch, memory, door, sessions));
  }
  return (req, res, next) => {
    const found = table.find(req.method, req.path);
    if (!found) return next();
    req.params = found.params;
    return found.value(req, res, next);
  };
}
