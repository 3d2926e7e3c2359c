import { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import { isInfraError } from '../src/errors.js';
import { readerClicked } from '../src/experiments/variants/post-title-readers.js';
import { followLink, type LinkDeps } from '../src/measurement/link-visits.service.js';
import { htmlPage } from './html-page.js';
import type { AppDeps } from './route-def.js';

/** Title and text are ours, never the request's. */
const page = (res: Response, status: number, title: string, text: string) => htmlPage(res, status, title, `<p>${text}</p>`);

const notFound = (res: Response) => page(res, 404, 'Link not found', 'This link is not valid. It may have been copied incompletely.');

/**
 * Tracked links (`{BASE_URL}/l/{code}`): no login, outside /api and its limiter. A known code always
 * answers 302 to its destination (with `gvid` for a person), after recording the visit when it counts
 * (a browser's repeat or a click over a limit is redirected uncounted); an unknown one a small HTML 404.
 * `no-store` so every click reaches us; `no-referrer` so the destination does not learn the page the
 * link was clicked on (the `gvid` is what attributes the visit).
 */
export function linksRouter(deps: AppDeps): Router {
  const router = Router({ strict: false });
  // A reader's click through a post's link counts in the post's title experiment (measurement is handed the rule).
  const linkDeps: LinkDeps = { ...deps, readerClicked };

  const follow: RequestHandler<{ code: string }> = async (req, res) => {
    const followed = await followLink(linkDeps, req.params.code, {
      method: req.method,
      userAgent: req.headers['user-agent'],
      ip: req.ip,
      // A post's reader token (src/content/post-title.ts); any other value is ignored.
      readerToken: req.query.x,
    });
    if (!followed) return notFound(res);
    res.setHeader('Cache-Control', 'no-store');
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
    res.redirect(302, followed.location);
  };

  const notAllowed: RequestHandler = (_req, res) => {
    res.setHeader('Allow', 'GET, HEAD');
    page(res, 405, 'Method not allowed', 'Open this link in a browser.');
  };

  router.get('/:code', follow);
  router.all('/:code', notAllowed);
  router.use((_req, res) => notFound(res));

  const failed: ErrorRequestHandler = (err, req, res, next) => {
    if (res.headersSent) return;
    // A code that cannot be percent-decoded (`/l/%ZZ`) cannot exist: the app's JSON 404.
    if (err instanceof URIError) return next(err);
    if (isInfraError(err)) {
      res.setHeader('Retry-After', '5');
      return page(res, 503, 'Try again shortly', 'This link could not be opened just now. Please try again in a moment.');
    }
    req.log.error({ err }, 'tracked link failed');
    page(res, 500, 'Something went wrong', 'Please try again later.');
  };
  router.use(failed);
  return router;
}
