import { afterAll, describe, expect } from 'vitest';
import { cardWake } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import { type Browser, launchChromium, serveApp, watchPage } from '../helpers/browser.js';
import { it } from '../helpers/fixture.js';

/**
 * Bull Board as an operator sees it: Debian's Chromium, headless, driven by playwright-core, logs in with
 * basic auth and reads the queues and a job through the board's own single-page app (its scripts call the
 * board's JSON API). What the HTML tests cannot show: that the page really renders and works in a browser,
 * loads nothing from another host, raises no script error, and offers no action while read-only.
 */

const PASSWORD = 'correct horse';

let served: Awaited<ReturnType<typeof serveApp>>;
let base: string;
let browser: Browser;
/** The delayed job the board must show. */
let id: string;
it.override('options', { env: { ADMIN_USER: 'ops', ADMIN_PASSWORD: PASSWORD, ADMIN_LOGIN_MAX_FAILURES: '50' } });
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  base = served.base;
  // Queued before Chromium starts: its start-up takes both cores for a while. The API's Redis client fails a
  // command after REDIS_COMMAND_TIMEOUT_MS (2 s in production, where fast failure is what a producer wants);
  // the fixture sets it to 15 s, as a loaded machine can hold a reply past 2 s (a full run once hit it here).
  id = await enqueue(
    env.deps.queues,
    cardWake,
    { accountId: 'acc_browser', cardId: 'card_browser', until: Date.now() + 3_600_000 },
    { delay: 3_600_000 },
  );
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe('Bull Board in headless Chromium', () => {
  it('shows the queues and a waiting job to a logged-in operator, loading only from this host, with no action offered', {
    timeout: 120_000,
  }, async () => {
    const context = await browser.newContext({ httpCredentials: { username: 'ops', password: PASSWORD } });
    try {
      const page = await context.newPage();
      const { hosts, failures } = watchPage(page);

      const first = await page.goto(`${base}/admin/queues`);
      expect(first?.status()).toBe(200);
      // The app renders every queue of the catalog from the board's API.
      for (const name of ['agent-turns', 'card-timers', 'shipments', 'webhook-events']) {
        await page.getByText(name, { exact: true }).first().waitFor({ timeout: 30_000 });
      }

      await page.goto(`${base}/admin/queues/queue/card-timers?status=delayed`);
      // The delayed job, its name and its data as the board's JSON viewer shows them.
      await page.getByText(id, { exact: true }).first().waitFor({ timeout: 30_000 });
      expect(await page.getByText('card.wake', { exact: true }).first().isVisible()).toBe(true);
      expect(await page.getByText('"card_browser"').first().isVisible()).toBe(true);
      // Read-only (the default): the board offers none of its actions on the queue or the job.
      for (const action of ['Promote', 'Retry', 'Clean', 'Pause', 'Empty', 'Remove', 'Add']) {
        expect(await page.getByRole('button', { name: action, exact: false }).count(), action).toBe(0);
      }

      expect([...hosts]).toEqual([new URL(base).host]);
      expect(failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('asks for a login: the 401 challenge, and a browser with no login or a wrong one is refused and shows no board', async () => {
    const anonymous = await browser.newContext();
    const wrong = await browser.newContext({ httpCredentials: { username: 'ops', password: 'wrong horse' } });
    try {
      // The challenge a browser answers with its login prompt.
      const challenge = await anonymous.request.get(`${base}/admin/queues`);
      expect(challenge.status()).toBe(401);
      expect(challenge.headers()['www-authenticate']).toMatch(/^Basic realm=/);
      expect(await challenge.text()).not.toContain('card-timers');
      // Headless, nobody fills the prompt in, and a wrong login is offered once and refused again: the
      // navigation ends on the 401 or is given up (ERR_INVALID_AUTH_CREDENTIALS), and no board renders.
      for (const context of [anonymous, wrong]) {
        const page = await context.newPage();
        const outcome = await page.goto(`${base}/admin/queues`).then(
          (res) => String(res?.status()),
          (err: Error) => err.message,
        );
        expect(outcome).toMatch(/^401$|ERR_INVALID_AUTH_CREDENTIALS/);
        expect(await page.getByText('card-timers').count()).toBe(0);
      }
    } finally {
      await anonymous.close();
      await wrong.close();
    }
  });
});
