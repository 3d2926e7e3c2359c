import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { adminActor } from '../../src/audit/audit.service.js';
import { invitePerson } from '../../src/people/invitations.service.js';
import { axeViolations, type Browser, launchChromium, type Page, screenshot, serveApp, watchPage } from '../helpers/browser.js';
import { PASSWORD, signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { totpCode } from '../helpers/totp.js';

/**
 * The dashboard's ways in, as a person goes through them in Debian's Chromium (headless, playwright-core):
 * an invitation accepted, two-step sign-in turned on and used, a password reset from the mailed link, the
 * sign-in throttle, and a cross-site form refused. Every page is checked with axe-core (no serious or
 * critical violation), loads nothing from another host, raises no script error, and is photographed for
 * docs/dashboard.md (UPDATE_SCREENSHOTS=1 writes the pictures there).
 */

const OTHER_SITE = 'This request came from another site; reload the dashboard and try again.';

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
it.override('options', ({ smtp }) => ({
  env: {
    ...smtpEnv(smtp),
    // argon2id at its floor: the flows hash a few passwords, and the cost is not what this file checks.
    DASHBOARD_PASSWORD_MEMORY_KIB: '8192',
    DASHBOARD_PASSWORD_TIME_COST: '1',
    DASHBOARD_SIGNIN_ADDRESS_FAILURES: '3',
  },
}));
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

/** The page at a dashboard path of the test server (a mailed link names BASE_URL's host: its path is kept). */
const at = (link: string) => `${served.base}${new URL(link, served.base).pathname}`;

/** Answers a flow expects: signed out, a wrong password, the code step, the throttle. */
const expected = (status: number, url: string) => (status === 401 || status === 429) && url.includes('/dashboard/api/session');

async function checkPage(page: Page, shot: string | null) {
  const violations = await axeViolations(page);
  expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
  if (shot) await screenshot(page, `dashboard-${shot}`);
}

async function newPage() {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  return { context, page, watch: watchPage(page, expected) };
}

describe('the dashboard in headless Chromium: ways in', () => {
  it('invitation → name and password → signed in → two-step sign-in on → signed out → signed in again with a code', {
    timeout: 120_000,
  }, async ({ env }) => {
    const account = await createAccount(env.deps.db, 'Acme');
    const email = 'ana@acme.example';
    const { link } = await invitePerson(env.deps, adminActor(account.id, 'person invite'), {
      accountId: account.id,
      email,
      role: 'owner',
      invitedBy: null,
    });
    const { context, page, watch } = await newPage();
    try {
      await page.goto(at(link));
      await page.getByRole('heading', { name: 'Join Acme' }).waitFor();
      await page.getByText(`with the address ${email}`).waitFor();
      await checkPage(page, 'invite');
      await page.getByLabel('Your name').fill('Ana Lima');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Join and sign in' }).click();
      await page.getByRole('heading', { name: 'Profile & security' }).waitFor();
      expect(page.url()).toBe(`${served.base}/dashboard/settings/profile`);

      // Two-step sign-in: the server's QR code as an image, the setup key, a code from the key.
      await page.getByRole('button', { name: 'Set up two-step sign-in' }).click();
      const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
      await qr.waitFor();
      expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml/);
      expect(await qr.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
      const secret = await page.getByLabel('Setup key').inputValue();
      expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
      await checkPage(page, 'totp-setup');
      await page.getByLabel('Code from the app').fill(totpCode(secret));
      await page.getByRole('button', { name: 'Turn on' }).click();
      const codes = page.getByRole('list', { name: 'Recovery codes' }).getByRole('listitem');
      await codes.first().waitFor();
      expect(await codes.count()).toBe(10);
      await page.getByText('On', { exact: true }).waitFor();
      await checkPage(page, 'profile');

      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByLabel('Authentication code').waitFor();
      await checkPage(page, 'sign-in-code');
      // The next step's code: confirming used this step's, and a code never signs in twice.
      await page.getByLabel('Authentication code').fill(totpCode(secret, Date.now() + 30_000));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('heading', { name: 'Profile & security' }).waitFor();
      expect(await page.getByText('Ana Lima').first().isVisible()).toBe(true);

      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('forgot password → the mailed link → a new password → the old sessions are over → signed in with it', {
    timeout: 90_000,
  }, async ({ env, smtp }) => {
    const person = await signedIn(env, { name: 'Bo Chen', email: 'bo@acme.example' });
    const { context, page, watch } = await newPage();
    try {
      await page.goto(`${served.base}/dashboard/`);
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      await checkPage(page, 'sign-in');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
      await checkPage(page, 'forgot');
      await page.getByLabel('Email').fill(person.email);
      await page.getByRole('button', { name: 'Send the link' }).click();
      await page.getByRole('status').getByText('a link to reset the password is on its way').waitFor();

      // The link, from the mail the SMTP stand-in took.
      let link = '';
      await waitFor(
        async () => {
          const mail = smtp.received.find((m) => m.to.includes(person.email));
          link = /(https?:\/\/\S+\/dashboard\/\S+)/.exec(mail?.raw.replace(/=\r?\n/g, '') ?? '')?.[1] ?? '';
          return link !== '';
        },
        'the reset mail at the SMTP stand-in',
        30_000,
      );
      await page.goto(at(link));
      await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
      await checkPage(page, 'reset');
      const fresh = 'a new and longer passphrase';
      await page.getByLabel('New password').fill(fresh);
      await page.getByLabel('Type it again').fill(fresh);
      await page.getByRole('button', { name: 'Set the password' }).click();
      await page.getByText('Your password is changed').waitFor();
      // The session the person had before is over.
      expect((await person.request('get', '/dashboard/api/session')).status).toBe(401);

      await page.getByRole('link', { name: 'Sign in' }).click();
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill(fresh);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Profile & security' }).waitFor();

      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('throttles sign-in: past the failures allowed, the page shows the server’s refusal with the wait from Retry-After', {
    timeout: 60_000,
  }, async ({ env }) => {
    const person = await signedIn(env, { name: 'Cy' });
    const { context, page, watch } = await newPage();
    try {
      await page.goto(`${served.base}/dashboard/sign-in`);
      await page.getByLabel('Email').fill(person.email);
      await page.getByLabel('Password').fill('not the password at all');
      const statuses: number[] = [];
      let retryAfter: string | undefined;
      for (let i = 0; i < 4; i++) {
        const [res] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/dashboard/api/session') && r.request().method() === 'POST'),
          page.getByRole('button', { name: 'Sign in' }).click(),
        ]);
        statuses.push(res.status());
        retryAfter = res.headers()['retry-after'];
        await page.getByRole('alert').waitFor();
      }
      expect(statuses).toEqual([401, 401, 401, 429]);
      expect(Number(retryAfter)).toBeGreaterThan(0);
      const alert = (await page.getByRole('alert').textContent()) ?? '';
      expect(alert).toContain(`Try again in ${retryAfter} s.`);
      await checkPage(page, 'sign-in-throttled');
      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('refuses a form another site posts with the person’s cookie, and the session lives on', { timeout: 60_000 }, async ({ env }) => {
    const person = await signedIn(env, { name: 'Dee' });
    // Another origin on this machine: 127.0.0.1 on another port is the same site (the Lax cookie goes with the
    // POST), so only the Origin rule stands between it and the session; localhost is another site as well.
    const attacker = http.createServer((_req, res) => {
      res.setHeader('Content-Type', 'text/html');
      res.end(
        `<!doctype html><title>Win a prize</title><form method="post" action="${served.base}/dashboard/api/session/sign-out-everywhere">` +
          '<button>Claim</button></form>',
      );
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    const port = (attacker.address() as AddressInfo).port;
    const context = await browser.newContext();
    try {
      const { hostname } = new URL(served.base);
      await context.addCookies([{ name: 'gas_session', value: person.cookie.split('=')[1]!, domain: hostname, path: '/' }]);
      for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
        const page = await context.newPage();
        await page.goto(`${origin}/`);
        const [res] = await Promise.all([
          page.waitForResponse((r) => r.url().endsWith('/sign-out-everywhere')),
          page.getByRole('button', { name: 'Claim' }).click(),
        ]);
        expect(res.request().headers().origin, origin).toBe(origin);
        if (origin.includes('127.0.0.1')) {
          expect(res.status()).toBe(403);
          expect(await res.json()).toEqual({ error: OTHER_SITE });
        } else expect([401, 403]).toContain(res.status());
        await page.close();
      }
      expect((await person.request('get', '/dashboard/api/session')).status).toBe(200);
    } finally {
      await context.close();
      await new Promise((r) => attacker.close(r));
    }
  });
});
