import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import type { Principal } from '../src/tokens/tokens.types.js';
import { lastUsedRecorder } from '../src/tokens/tokens.service.js';
import { hashToken } from '../src/tokens/token-format.js';
import { bearerToken, requireScope, resolvePrincipal } from './middleware/auth.js';
import { applyLimit, spend } from './middleware/rate-limit.js';
import { parsePart } from './middleware/validate.js';
import { expressPath, type AppDeps, type RouteContext, type RouteDef } from './route.js';

/** The order every request goes through: authenticate, limit, check scope, read the body, validate, handle. */
/**
 * Which account and token a token hash belongs to: that never changes, so it is safe to remember. It
 * lets the limiter run beside the fresh Postgres check instead of after it; whether the token is
 * still live is decided by Postgres on every request.
 */
class LimiterKeys {
  private readonly keys = new Map<string, { accountId: string; tokenId: string }>();
  get(hash: string) {
    return this.keys.get(hash);
  }
  remember(hash: string, p: Principal): void {
    if (this.keys.size >= 10_000) this.keys.clear();
    this.keys.set(hash, { accountId: p.accountId, tokenId: p.tokenId });
  }
}

/** Authenticates and spends from the rate limit: 401/503 first, then 429 (or 503 for writes). */
async function admit(route: RouteDef, deps: AppDeps, keys: LimiterKeys, req: Request, res: Response): Promise<Principal> {
  const token = bearerToken(req.headers.authorization);
  const hash = hashToken(token);
  const known = keys.get(hash);
  const early = known ? spend(deps, known, route.bucket) : null;
  const principal = await resolvePrincipal(deps, token);
  keys.remember(hash, principal);
  applyLimit(await (early ?? spend(deps, principal, route.bucket)), route.bucket, res);
  return principal;
}

function runner(route: RouteDef, deps: AppDeps, touch: (tokenId: string, at: number) => void, keys: LimiterKeys): RequestHandler {
  const readBody = bodyParserFor(route);
  return async (req, res) => {
    let principal: Principal | null = null;
    if (route.auth !== 'none') {
      principal = await admit(route, deps, keys, req, res);
      touch(principal.tokenId, Date.now());
      requireScope(principal, route.scope);
    }
    // Read only once the caller is known to be allowed: a stranger cannot make us read a body.
    if (readBody) await new Promise<void>((resolve, reject) => readBody(req, res, (err?: unknown) => (err ? reject(err) : resolve())));
    const input = {
      params: route.params ? parsePart(route.params, req.params, 'params') : {},
      query: route.query ? parsePart(route.query, req.query ?? {}, 'query') : {},
      body: route.body ? parsePart(route.body, req.body, 'body') : undefined,
    };
    let abort: AbortController | undefined;
    const ctx: RouteContext = {
      deps,
      principal: principal as Principal,
      actor: {
        accountId: principal?.accountId ?? '',
        actor: 'api',
        tokenId: principal?.tokenId ?? null,
        tokenLabel: principal?.label ?? null,
        method: route.method.toUpperCase(),
        route: route.path,
      },
      requestId: String(req.id),
      log: req.log,
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
    const reply = await route.handler(input, ctx);
    if (res.headersSent) return;
    for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
    res.status(reply.status ?? 200).json(reply.body);
  };
}

const DEFAULT_JSON_LIMIT = 1024 * 1024;

/** The route's body reader, or none when it takes no body. */
function bodyParserFor(route: RouteDef): RequestHandler | null {
  if (route.bodyParser?.kind === 'raw') return express.raw({ type: () => true, limit: route.bodyParser.limitBytes });
  if (route.body || route.bodyParser) return express.json({ limit: route.bodyParser?.limitBytes ?? DEFAULT_JSON_LIMIT, strict: false });
  return null;
}

/** Mounts the route table. Express 5 forwards rejected promises to the error handler. */
export function buildRouter(routes: RouteDef[], deps: AppDeps): Router {
  const router = Router();
  const touch = lastUsedRecorder(deps.db);
  const keys = new LimiterKeys();
  for (const route of routes) router[route.method](expressPath(route.path), runner(route, deps, touch, keys));
  return router;
}

declare module 'express-serve-static-core' {
  interface Request {
    id: string | number | object;
  }
}
export type { Request };
