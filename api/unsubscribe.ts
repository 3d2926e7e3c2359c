import express, { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
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

const notFound = (res: Response) =>
  page(res, 404, 'Link not found', '<p>This unsubscribe link is not valid. It may have been copied incompletely.</p>');

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
    page(res, 429, 'Too many requests', '<p>Nothing was changed. Please try again in a minute.</p>');
  };

  const show: RequestHandler<{ token: string }> = async (req, res) => {
    const thread = await threadForUnsubscribe(deps, req.params.token);
    if (!thread) return notFound(res);
    page(
      res,
      200,
      'Unsubscribe',
      `<p>Stop all mail from this sender to <strong>${escapeHtml(maskAddress(thread.to))}</strong>?</p>` +
        '<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">' +
        '<button type="submit">Unsubscribe</button></form>',
    );
  };

  const unsubscribe: RequestHandler<{ token: string }> = async (req, res) => {
    if (!isOneClickBody(req.headers['content-type'], req.body))
      return page(
        res,
        400,
        'Bad request',
        '<p>Nothing was changed. A one-click unsubscribe POST carries <code>List-Unsubscribe=One-Click</code> (RFC 8058); ' +
          'open this link in a browser to use its Unsubscribe button.</p>',
      );
    const thread = await unsubscribeByToken(deps, req.params.token);
    if (!thread) return notFound(res);
    page(
      res,
      200,
      'You are unsubscribed',
      `<p><strong>${escapeHtml(maskAddress(thread.to))}</strong> will get no more mail from this sender.</p>`,
    );
  };

  const notAllowed: RequestHandler = (_req, res) => {
    res.setHeader('Allow', 'GET, HEAD, POST');
    page(res, 405, 'Method not allowed', '<p>Open this link in a browser, or use its Unsubscribe button.</p>');
  };

  router.use(limited);
  router.get('/:token', show);
  router.post('/:token', readBody, unsubscribe);
  router.all('/:token', notAllowed);
  router.use((_req, res) => notFound(res));

  const failed: ErrorRequestHandler = (err, req, res, next) => {
    const e = err as { type?: string; status?: number };
    if (res.headersSent) return;
    // A token that cannot be percent-decoded (`/u/%ZZ`) cannot exist: the app's JSON 404, as for /l/.
    if (err instanceof URIError) return next(err);
    if (e?.type === 'entity.too.large') {
      res.setHeader('Connection', 'close');
      return page(res, 413, 'Request too large', '<p>This link takes no content.</p>');
    }
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) {
      return page(res, 400, 'Bad request', '<p>The request could not be read.</p>');
    }
    if (isInfraError(err)) {
      res.setHeader('Retry-After', '5');
      return page(res, 503, 'Try again shortly', '<p>Nothing was changed. Please try again in a moment.</p>');
    }
    req.log.error({ err }, 'one-click unsubscribe failed');
    page(res, 500, 'Something went wrong', '<p>Please try again later.</p>');
  };
  router.use(failed);
  return router;
}
