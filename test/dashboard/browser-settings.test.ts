import { afterAll, describe, expect } from 'vitest';
import { OWNER_ONLY } from '../../api/middleware/session.js';
import { auth } from '../helpers/auth.js';
import {
  axeViolations,
  type Browser,
  launchChromium,
  type Page,
  screenshot,
  serveApp,
  signedInPage,
  type watchPage,
} from '../helpers/browser.js';
import { PASSWORD, type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';

/**
 * Settings as a person uses them in Debian's Chromium (headless, playwright-core): a token minted in the page
 * and used on /api/v1, a hook created, posted to, its delivery read in its log, its URL regenerated (the old
 * one refused), people, mail and approvals; a member is shown no owner's control and the server refuses the
 * owner's routes all the same; the navigation on a phone's width. Every page passes axe-core (no serious or
 * critical violation), loads nothing from another host and raises no script error.
 */

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let owner: SignedInPerson;
it.override('options', { env: { DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1' } });
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  owner = await signedIn(env, { name: 'Ana Lima', email: 'ana@acme.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

async function checkPage(page: Page, shot: string | null) {
  const violations = await axeViolations(page);
  expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
  if (shot) await screenshot(page, `dashboard-${shot}`);
}

/** A browser signed in as `who` through the sign-in page (`width` 390 is a phone's); `expected`: statuses the flow causes. */
const signedInPageAs = (who: { email: string; password: string }, width = 1280, expected: number[] = []) =>
  signedInPage(browser, served.base, who, { width, height: 800, expected });

async function open(page: Page, name: string, heading: string) {
  await page.getByRole('navigation').getByRole('link', { name }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor();
}

const clean = (watch: ReturnType<typeof watchPage>) => {
  expect([...watch.hosts]).toEqual([new URL(served.base).host]);
  expect(watch.failures).toEqual([]);
};

describe('the dashboard in headless Chromium: settings', () => {
  it('mints a token in the page (shown once, with each scope described) that /api/v1/me answers to, lists it and revokes it', {
    timeout: 90_000,
  }, async ({ env }) => {
    const { context, page, watch } = await signedInPageAs(owner);
    try {
      await open(page, 'API tokens', 'API tokens');
      await page.getByText('see what is waiting for approval').waitFor();
      await page.getByLabel('Label', { exact: true }).fill('CRM sync');
      await page.getByRole('checkbox', { name: /review:read/ }).check();
      await page.getByRole('checkbox', { name: /results:read/ }).check();
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = await page.getByRole('textbox', { name: 'Your new token' }).inputValue();
      expect(secret.length).toBeGreaterThan(20);

      const me = await env.api().get('/api/v1/me').set(auth(secret)).expect(200);
      expect(me.body.me).toMatchObject({ label: 'CRM sync', scopes: ['review:read', 'results:read'], account: { id: owner.accountId } });

      const row = page.getByRole('row', { name: /CRM sync/ });
      await row.waitFor();
      expect(await row.getByText('Ana Lima').isVisible()).toBe(true);
      await checkPage(page, 'tokens');

      await row.getByRole('button', { name: 'Revoke' }).click();
      await row.getByRole('button', { name: 'Revoke “CRM sync”' }).click();
      await row.waitFor({ state: 'detached' });
      await env.api().get('/api/v1/me').set(auth(secret)).expect(401);
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('creates a hook (its URL shown once), shows a POSTed delivery in its log, after regenerating refuses the old URL, and deletes it', {
    timeout: 90_000,
  }, async () => {
    // The 400: a label the server refuses, on purpose.
    const { context, page, watch } = await signedInPageAs(owner, 1280, [400]);
    try {
      await open(page, 'Webhooks', 'Webhooks');
      await page.getByLabel('Label', { exact: true }).fill('Not A Label!');
      await page.getByRole('button', { name: 'Create hook' }).click();
      // The server's sentence, next to the form.
      expect(await page.getByRole('alert').textContent()).toMatch(/label/);
      await page.getByLabel('Label', { exact: true }).fill('stripe-events');
      await page.getByRole('button', { name: 'Create hook' }).click();
      const url = await page.getByLabel('Hook URL').inputValue();
      expect(url).toMatch(/\/api\/webhook\/hook\/whk_/);
      const path = new URL(url).pathname;

      const post = (p: string) =>
        fetch(`${served.base}${p}`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: '{"type":"invoice.paid","amount":4200}',
        });
      expect((await post(path)).status).toBe(202);

      await page.getByRole('button', { name: 'Deliveries of stripe-events' }).click();
      await page.getByText('"type":"invoice.paid"').waitFor();
      // The delivery's own entry (inside the hook's).
      const delivery = page.locator('li.delivery').filter({ hasText: '"type":"invoice.paid"' });
      expect(await delivery.count()).toBe(1);
      expect(await delivery.getByText('Accepted', { exact: true }).isVisible()).toBe(true);
      await checkPage(page, 'webhooks');
      // The outcome filter asks the server for that outcome only.
      await page.getByLabel('Outcome').selectOption('rate_limited');
      await page.getByText('No deliveries with this outcome.').waitFor();
      await page.getByLabel('Outcome').selectOption('');
      await page.getByText('"type":"invoice.paid"').waitFor();

      await page.getByRole('button', { name: 'Regenerate URL' }).click();
      await page.getByRole('button', { name: 'Regenerate', exact: true }).click();
      await page.getByText('has a new URL; the old one is refused from now on').waitFor();
      const fresh = new URL(await page.getByLabel('Hook URL').inputValue()).pathname;
      expect(fresh).not.toBe(path);
      expect((await post(path)).status).toBe(404);
      expect((await post(fresh)).status).toBe(202);

      await page.getByRole('button', { name: 'Disable stripe-events' }).click();
      await page.getByText('Disabled', { exact: true }).waitFor();

      // Deleted after its question: gone from the list and from the server, and its URL refused.
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await page.getByRole('button', { name: 'Delete “stripe-events”' }).click();
      await page.getByRole('button', { name: 'Deliveries of stripe-events' }).waitFor({ state: 'detached' });
      const hooks = await owner.request('get', '/dashboard/api/hooks').expect(200);
      expect(hooks.body.items.map((h: { label: string }) => h.label)).not.toContain('stripe-events');
      expect((await post(fresh)).status).toBe(404);
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('people, mail and approvals for an owner: invite and withdraw, the DKIM and inbound addresses to copy, a mode changed', {
    timeout: 90_000,
  }, async () => {
    const { context, page, watch } = await signedInPageAs(owner);
    try {
      await open(page, 'People', 'People');
      for (const email of ['dee@acme.example', 'cy@acme.example']) {
        await page.getByLabel('Email').fill(email);
        await page.getByRole('button', { name: 'Send invitation' }).click();
        await page.getByText(`An invitation is on its way to ${email}.`).waitFor();
      }
      await page.getByRole('heading', { name: 'Pending invitations' }).waitFor();
      // Withdrawn after its question: it leaves the list and the server; the other stays (the member's page shows it).
      const dee = page.locator('li.list-row').filter({ hasText: 'dee@acme.example' });
      await dee.getByRole('button', { name: 'Withdraw', exact: true }).click();
      await page.getByRole('button', { name: 'Withdraw the invitation to dee@acme.example' }).click();
      await dee.waitFor({ state: 'detached' });
      const people = await owner.request('get', '/dashboard/api/people').expect(200);
      expect(people.body.invitations.map((i: { email: string }) => i.email)).toEqual(['cy@acme.example']);
      await checkPage(page, 'people');

      await open(page, 'Mail', 'Mail');
      await page.getByLabel('Inbound address').waitFor();
      expect(await page.getByLabel('From').inputValue()).not.toBe('');
      await checkPage(page, 'mail');

      await open(page, 'Approvals', 'Approvals');
      await page.getByLabel('Approval for Emails').selectOption('always_ask');
      await page.getByText('Emails: saved.').waitFor();
      expect(await page.getByLabel('Approval for Emails').inputValue()).toBe('always_ask');
      const approvals = await owner.request('get', '/dashboard/api/settings/approvals').expect(200);
      expect(approvals.body.items.find((i: { kind: string }) => i.kind === 'email').mode).toBe('always_ask');
      await checkPage(page, 'approvals');
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('shows a member no owner’s control, and the server answers their owner-only requests 403', { timeout: 90_000 }, async ({ env }) => {
    const member = await signedIn(env, { role: 'member', accountId: owner.accountId, name: 'Bo Chen', email: 'bo@acme.example' });
    const { context, page, watch } = await signedInPageAs({ email: member.email, password: PASSWORD });
    try {
      const nav = page.getByRole('navigation');
      expect(await nav.getByRole('link', { name: 'Webhooks' }).count()).toBe(0);
      expect(await nav.getByRole('link', { name: 'API tokens' }).count()).toBe(1);

      await open(page, 'People', 'People');
      await page.getByRole('cell', { name: 'Ana Lima' }).waitFor();
      for (const control of ['Send invitation', 'Remove', 'Withdraw'])
        expect(await page.getByRole('button', { name: control }).count(), control).toBe(0);
      expect(await page.getByRole('combobox').count()).toBe(0);
      await checkPage(page, 'people-member');

      await open(page, 'Mail', 'Mail');
      await page.getByLabel('Inbound address').waitFor();
      expect(await page.getByRole('button', { name: 'Save' }).count()).toBe(0);
      await open(page, 'Approvals', 'Approvals');
      await page.getByRole('table').waitFor();
      expect(await page.getByRole('combobox').count()).toBe(0);

      // Typed in by hand, the hooks page is not there for a member.
      await page.goto(`${served.base}/dashboard/settings/webhooks`);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      clean(watch);
    } finally {
      await context.close();
    }
    // The server refuses all the same.
    for (const [method, path, body] of [
      ['get', '/dashboard/api/hooks', undefined],
      ['post', '/dashboard/api/hooks', { label: 'mine' }],
      ['post', '/dashboard/api/people/invitations', { email: 'x@acme.example', role: 'owner' }],
      ['patch', '/dashboard/api/settings/approvals/email', { mode: 'ship' }],
    ] as const) {
      const res = await member.request(method, path, body);
      expect(res.status, path).toBe(403);
      expect(res.body, path).toEqual({ error: OWNER_ONLY });
    }
  });

  it('folds the navigation under a Menu button on a phone’s width, reachable by keyboard', { timeout: 60_000 }, async () => {
    const { context, page, watch } = await signedInPageAs(owner, 390);
    try {
      const nav = page.getByRole('navigation');
      expect(await nav.isVisible()).toBe(false);
      const menu = page.getByRole('button', { name: 'Menu' });
      await menu.focus();
      await page.keyboard.press('Enter');
      expect(await menu.getAttribute('aria-expanded')).toBe('true');
      await nav.getByRole('link', { name: 'API tokens' }).waitFor();
      await checkPage(page, 'phone-menu');
      // Tab moves into the menu; a focused link shows its focus ring.
      await page.keyboard.press('Tab');
      const outline = await page.evaluate(() => {
        const el = (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement;
        const style = (globalThis as unknown as { getComputedStyle: (e: unknown) => { outlineStyle: string } }).getComputedStyle(el);
        return style.outlineStyle;
      });
      expect(outline).not.toBe('none');
      await page.keyboard.press('Escape');
      expect(await menu.getAttribute('aria-expanded')).toBe('false');
      clean(watch);
    } finally {
      await context.close();
    }
  });
});
