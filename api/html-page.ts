import type { Response } from 'express';

/** No script, no style, no frame, no resource. */
export const NO_RESOURCES_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'";

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * A small HTML page for the public, login-free links outside /api (one-click unsubscribe at /u/,
 * tracked links at /l/): never cached, never indexed, no referrer passed on. `title` is escaped;
 * `body` is HTML the caller built (escape anything that came from data).
 */
export function htmlPage(res: Response, status: number, title: string, body: string, csp = NO_RESOURCES_CSP): void {
  res.status(status);
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.send(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex">` +
      `<meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>` +
      `<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>\n`,
  );
}
