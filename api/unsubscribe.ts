import express, { Router, type ErrorRequestHandler, type Request, type RequestHandler, type Response } from 'express';
import { isInfraError } from '../src/errors.js';
import { threadForUnsubscribe, unsubscribeByToken } from '../src/inbound/one-click.service.js';
import { clientOf, clientWindow } from '../src/measurement/clients.js';
import { escapeHtml, htmlPage } from './html-page.js';
import type { AppDeps } from './route-def.js';

/** Where one-click links point (`{BASE_URL}/u/{token}`), outside /api and its bearer auth. */
export const UNSUBSCRIBE_PATH = '/u';
/** A one-click POST carries `List-Unsubscribe=One-Click` (RFC 8058) or the page's form: never more than this. */
export const UNSUBSCRIBE_BODY_LIMIT = 1024;

/** No script, no style, no frame, no resource; only the page's own form may post, and only here. */
const CSP = "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";
const page = (res: Response, status: number, title: string, body: string) => htmlPage(res, status, title, body, CSP);

/**
 * Every answer is JSON (the spec's `{ error }` for a refusal) unless the client asks for a page: a browser
 * (`Accept: text/html` before JSON) gets the same answer as a page a person can read and use. A mail client's
 * RFC 8058 POST, a scanner or a script never gets HTML (docs/decisions/links.md, "JSON unless a browser asks").
 */
function answer(req: Request, res: Response, status: number, json: Record<string, unknown>, title: string, html: string) {
  if (req.accepts(['json', 'html']) === 'html') return page(res, status, title, html);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.status(status).json(json);
}

/** `jane@example.com` → `j***@example.com`: enough for its owner to recognise, too little to harvest. */
export function maskAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at <= 0) return '***';
  return `${address[0]}***${address.slice(at)}`;
}

/** RFC 8058's one-click body, as `application/x-www-form-urlencoded` (the page's form, Gmail, most clients). */
const ONE_CLICK_FORM = 'One-Click';
/** The same as a `multipart/form-data` part, which RFC 8058 also allows. */
const ONE_CLICK_PART =
  /content-disposition:[ \t]*form-data;[ \t]*name="?List-Unsubscribe"?[^\r\n]*\r?\n(?:[^\r\n]+\r?\n)*\r?\nOne-Click\r?\n/i;

/** Whether a POST's body is RFC 8058's `List-Unsubscribe=One-Click`, urlencoded or as a multipart part. */
export function isOneClickBody(type: string | undefined, body: unknown): boolean {
  if (!Buffer.isBuffer(body) || !body.length) return false;
  const text = body.toString('latin1');
  if (/^multipart\/form-data\b/i.test(type ?? '')) return ONE_CLICK_PART.test(text);
  return new URLSearchParams(text.trim()).getAll('List-Unsubscribe').includes(ONE_CLICK_FORM);
}

const notFound = (req: Request, res: Response) =>
  answer(
    req,
    res,
    404,
    { error: 'not found' },
    'Link not found',
    '<p>This unsubscribe link is not valid. It may have been copied incompletely.</p>',
  );

/**
 * One-click unsubscribe (RFC 8058), no login: the token in the URL is the credential.
 * GET shows a confirmation page and changes nothing (mail scanners and link previews follow GET links);
 * POST unsubscribes (the mail client's one-click POST, or the page's button), the same answer on a repeat.
 */
export function unsubscribeRouter(deps: AppDeps): Router {
  const router = Router({ strict: false });
  // Read whole, bounded; only RFC 8058's `List-Unsubscribe=One-Click` unsubscribes, any other body (an
  // empty one too) is a 400 page and changes nothing (docs/decisions/links.md, "The one-click POST's body").
  const readBody = express.raw({ type: () => true, limit: UNSUBSCRIBE_BODY_LIMIT, inflate: false });
  // Requests per client network per minute, every method, before anything is read (docs/decisions/links.md).
  const perClient = clientWindow(deps.redis, deps.config.queuePrefix, 'one-click', {
    limit: deps.config.links.unsubscribeClientPerMinute,
    windowMs: 60_000,
  });
  const limited: RequestHandler = async (req, res, next) => {
    const wait = await perClient.take(clientOf(req.ip));
    if (!wait) return next();
    res.setHeader('Retry-After', String(wait));
    answer(req, res, 429, { error: 'rate limited' }, 'Too many requests', '<p>Nothing was changed. Please try again in a minute.</p>');
  };

  const show: RequestHandler<{ token: string }> = async (req, res) => {
    const thread = await threadForUnsubscribe(deps, req.params.token);
    if (!thread) return notFound(req, res);
    answer(
      req,
      res,
      200,
      { to: maskAddress(thread.to), unsubscribe: 'POST this URL with the body List-Unsubscribe=One-Click' },
      'Unsubscribe',
      `<p>Stop all mail from this sender to <strong>${escapeHtml(maskAddress(thread.to))}</strong>?</p>` +
        '<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">' +
        '<button type="submit">Unsubscribe</button></form>',
    );
  };

  const unsubscribe: RequestHandler<{ token: string }> = async (req, res) => {
    if (!isOneClickBody(req.headers['content-type'], req.body))
      return answer(
        req,
        res,
        400,
        { error: 'body must be List-Unsubscribe=One-Click (RFC 8058)' },
        'Bad request',
        '<p>Nothing was changed. A one-click unsubscribe POST carries <code>List-Unsubscribe=One-Click</code> (RFC 8058); ' +
          'open this link in a browser to use its Unsubscribe button.</p>',
      );
    const thread = await unsubscribeByToken(deps, req.params.token);
    if (!thread) return notFound(req, res);
    answer(
      req,
      res,
      200,
      { ok: true, to: maskAddress(thread.to) },
      'You are unsubscribed',
      `<p><strong>${escapeHtml(maskAddress(thread.to))}</strong> will get no more mail from this sender.</p>`,
    );
  };

  const notAllowed: RequestHandler = (req, res) => {
    res.setHeader('Allow', 'GET, HEAD, POST');
    answer(
      req,
      res,
      405,
      { error: 'method not allowed' },
      'Method not allowed',
      '<p>Open this link in a browser, or use its Unsubscribe button.</p>',
    );
  };

  router.use(limited);
  router.get('/:token', show);
  router.post('/:token', readBody, unsubscribe);
  router.all('/:token', notAllowed);
  router.use((req, res) => notFound(req, res));

  const failed: ErrorRequestHandler = (err, req, res, next) => {
    const e = err as { type?: string; status?: number };
    if (res.headersSent) return;
    // A token that cannot be percent-decoded (`/u/%ZZ`) cannot exist: the app's JSON 404, as for /l/.
    if (err instanceof URIError) return next(err);
    if (e?.type === 'entity.too.large') {
      res.setHeader('Connection', 'close');
      return answer(req, res, 413, { error: 'request too large' }, 'Request too large', '<p>This link takes no content.</p>');
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      return answer(req, res, 400, { error: 'request is malformed' }, 'Bad request', '<p>The request could not be read.</p>');
    }
    if (isInfraError(err)) {
      res.setHeader('Retry-After', '5');
      const sorry = '<p>Nothing was changed. Please try again in a moment.</p>';
      return answer(req, res, 503, { error: 'temporarily unavailable' }, 'Try again shortly', sorry);
    }
    req.log.error({ err }, 'one-click unsubscribe failed');
    answer(req, res, 500, { error: 'server misconfigured' }, 'Something went wrong', '<p>Please try again later.</p>');
  };
  router.use(failed);
  return router;
}
