import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useSyncExternalStore } from 'react';

/**
 * Hand-rolled history routing under /dashboard/: the service answers index.html for every page path, and
 * the app picks the page from location.pathname. Links are real <a href> (open in a new tab works) whose
 * plain clicks push history instead of reloading.
 */

export const BASE = '/dashboard';

const listeners = new Set<() => void>();
function emit(): void {
  for (const l of listeners) l();
}
window.addEventListener('popstate', emit);

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

/** The path inside the dashboard, '/' for the dashboard's root. */
export function usePath(): string {
  const path = useSyncExternalStore(subscribe, () => window.location.pathname);
  const inner = path.startsWith(BASE) ? path.slice(BASE.length) : path;
  return inner === '' ? '/' : inner.replace(/\/+$/, '') || '/';
}

export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  emit();
  window.scrollTo(0, 0);
}

export function Redirect({ to }: { to: string }): null {
  useEffect(() => navigate(to, true), [to]);
  return null;
}

type LinkProps = Omit<AnchorHTMLAttributes<HTMLAnchorElement>, 'href'> & { to: string };

export function Link({ to, onClick, ...rest }: LinkProps) {
  const handle = (e: MouseEvent<HTMLAnchorElement>) => {
    onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={`${BASE}${to}`} onClick={handle} {...rest} />;
}

/** `/reset/:token` against a path: the params, or null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const p = pattern.split('/');
  const s = path.split('/');
  if (p.length !== s.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < p.length; i++) {
    const part = p[i]!;
    const seg = s[i]!;
    if (part.startsWith(':')) {
      if (!seg) return null;
      params[part.slice(1)] = decodeURIComponent(seg);
    } else if (part !== seg) return null;
  }
  return params;
}
