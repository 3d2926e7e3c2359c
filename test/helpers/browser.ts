import { readFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Express } from 'express';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { ensurePackage, ROOT } from './processes.js';

/**
 * Debian's Chromium, headless, driven by playwright-core: the browser tests' one launcher. Installed with
 * apt-get when missing (scripts/ensure-package.sh), as the other stand-ins are.
 */
export const CHROMIUM = '/usr/bin/chromium';
// As the machine's notes start it: without the background-networking flags it reaches for Google's hosts.
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launchChromium(): Promise<Browser> {
  ensurePackage('chromium', CHROMIUM);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS });
}

/** The app on a real loopback port (a browser needs one), and its base URL. */
export async function serveApp(app: Express): Promise<{ base: string; close: () => Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * What a page did that a test refuses: every host it asked (only the service's may appear), script errors,
 * console errors and failed answers. `allowStatus` lists answers a flow expects (a wrong password's 401).
 */
export function watchPage(page: Page, allowStatus: (status: number, url: string) => boolean = () => false) {
  const hosts = new Set<string>();
  const failures: string[] = [];
  page.on('request', (r) => hosts.add(new URL(r.url()).host));
  page.on('pageerror', (err) => failures.push(`page error: ${err.message}`));
  page.on('console', (m) => {
    // A 4xx the flow expects still prints "Failed to load resource" in Chromium's console.
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) failures.push(`console: ${m.text()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400 && !allowStatus(r.status(), r.url())) failures.push(`${r.status()} ${r.url()}`);
  });
  return { hosts, failures };
}

/**
 * A new browser context signed in through the dashboard's sign-in page as `who`, on the page it lands on
 * (Profile & security), with its page watched (watchPage): the session probe's 401 before sign-in is
 * expected, and so is every status in `expected`. `width` 390 is a phone's.
 */
export async function signedInPage(
  browser: Browser,
  base: string,
  who: { email: string; password: string },
  { width = 1280, height = 900, expected = [] as number[] } = {},
) {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  const watch = watchPage(page, (status, url) => (status === 401 && url.endsWith('/dashboard/api/session')) || expected.includes(status));
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Profile & security' }).waitFor();
  return { context, page, watch };
}

const AXE = readFileSync(path.join(ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[]; failureSummary?: string }[];
}

/**
 * axe-core's WCAG checks run in the page as it stands: the serious and critical violations, each with the
 * elements it found. The script goes in through the DevTools protocol (addScriptTag would be an inline
 * script, which the dashboard's CSP refuses).
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return axe.run((globalThis as unknown as { document: unknown }).document, { resultTypes: ['violations'] });
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target, failureSummary: n.failureSummary })),
    }));
}

/**
 * A full-page screenshot of a dashboard page. With UPDATE_SCREENSHOTS=1 it goes to docs/screenshots/<name>.png,
 * the pictures docs/dashboard.md shows (commit them); otherwise to a temporary folder, so a test run leaves
 * the work tree as it was (the pages hold fresh ids, codes and dates at every run).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir =
    process.env.UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs/screenshots') : path.join(tmpdir(), 'gas-dashboard-screenshots');
  // From the top: a full-page capture draws the sticky sidebar where the window was scrolled to (a test that acted
  // low on a long page would leave it floating mid-page in the picture).
  await page.evaluate('window.scrollTo(0, 0)');
  await page.screenshot({ path: path.join(dir, `${name}.png`), fullPage: true, animations: 'disabled' });
}

export type { Browser, BrowserContext, Page };
