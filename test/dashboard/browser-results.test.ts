import { afterAll, describe, expect } from 'vitest';
import { axeViolations, type Browser, launchChromium, screenshot, serveApp, signedInPage } from '../helpers/browser.js';
import { type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { it, type TestEnv } from '../helpers/fixture.js';

/**
 * The scoreboard in Debian's Chromium: every channel section GET /api/v1/results answers is shown, with its
 * figures or the reason it has none; the window picker asks the server again. axe-core finds nothing serious.
 */

let env: TestEnv;
let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let ana: SignedInPerson;
it.override('options', { env: { DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1' } });
it.beforeAll(async ({ env: e }) => {
  env = e;
  served = await serveApp(env.app);
  ana = await signedIn(env, { name: 'Ana Lima', email: 'ana@results.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe('the scoreboard in headless Chromium', () => {
  it('shows each channel the results route answers, its figures or why it has none, for the window picked', {
    timeout: 90_000,
  }, async () => {
    const api = await ana.request('get', '/dashboard/api/v1/results').expect(200);
    const channels = Object.entries(api.body.results as Record<string, { available?: boolean; reason?: string }>).filter(
      ([, v]) => v && typeof v === 'object' && 'available' in v,
    );
    expect(channels.length).toBeGreaterThan(0);

    const { context, page, watch } = await signedInPage(browser, served.base, ana);
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/dashboard/api/v1/results')) asked.push(r.url());
    });
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Results' }).click();
      await page.getByRole('heading', { name: 'Results', level: 1 }).waitFor();
      await page.locator('article.channel').first().waitFor();
      expect(await page.locator('article.channel').count()).toBe(channels.length);
      for (const [, v] of channels.filter(([, v]) => v.available === false))
        expect(await page.getByText(`Not available: ${v.reason}`).count()).toBeGreaterThan(0);
      // An available channel shows its figures: the harness counts turns in the window (zero here, shown as 0, not unknown).
      const harness = page.locator('article.channel').filter({ has: page.getByRole('heading', { name: 'Harness' }) });
      if (channels.some(([k, v]) => k === 'harness' && v.available)) {
        expect(await harness.locator('dt', { hasText: 'Window: Turns' }).count()).toBe(1);
        expect(await harness.locator('dd').first().textContent()).toBe('0');
      }
      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
      await screenshot(page, 'dashboard-results');

      await page.getByLabel('Window').selectOption({ label: 'The last 7 days' });
      await expect.poll(() => asked.length, { timeout: 15_000 }).toBe(2);
      const since = Number(new URL(asked[1]!).searchParams.get('since'));
      expect(Date.now() - since).toBeGreaterThanOrEqual(7 * 24 * 3_600_000);
      await page.locator('article.channel').first().waitFor();
      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
