import { afterAll, describe, expect } from 'vitest';
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
import { type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { buildLead } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { followMailLink, receiveAnswer, type SendCard, shipMail } from '../helpers/lead-history.js';
import { smtpEnv } from '../helpers/smtp-server.js';

/**
 * Leads in Debian's Chromium: the list filtered by status, searched over all the account's leads, paged by cursor,
 * a lead's page (labels edited, its timeline of a real send, reply and bounce, blocking its domain); a CSV
 * imported through the page (preview with its bad rows, then the job's progress to done, the maintenance
 * pool running in-process); the block list, added to. Each page passes axe-core and asks no other host.
 */

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let ana: SignedInPerson;
it.override('options', ({ smtp }) => ({
  env: { DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1', ...smtpEnv(smtp) },
  pools: ['maintenance'],
}));
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  ana = await signedIn(env, { name: 'Ana Lima', email: 'ana@leads.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

const signedInAsAna = (expected: number[] = []) => signedInPage(browser, served.base, ana, { expected });

async function check(page: Page, shot: string) {
  const violations = await axeViolations(page);
  expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
  await screenshot(page, `dashboard-${shot}`);
}

const clean = (watch: ReturnType<typeof watchPage>) => {
  expect([...watch.hosts]).toEqual([new URL(served.base).host]);
  expect(watch.failures).toEqual([]);
};

describe('leads in headless Chromium', () => {
  it('filters by status, searches, pages by cursor and opens a lead', { timeout: 120_000 }, async ({ env }) => {
    for (let i = 0; i < 55; i++) await buildLead(env.deps.db, ana.accountId, { domain: `co${i}.test`, status: 'new' });
    await buildLead(env.deps.db, ana.accountId, {
      domain: 'northwind.test',
      companyName: 'Northwind Traders',
      status: 'replied',
      contacts: [{ email: 'dana@northwind.test' }],
    });
    const { context, page, watch } = await signedInAsAna();
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Leads' }).click();
      await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor();
      const rows = page.locator('tbody tr');
      await rows.first().waitFor();
      expect(await rows.count()).toBe(50);
      await page.getByRole('button', { name: 'Load more' }).click();
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(56);
      expect(await page.getByRole('button', { name: 'Load more' }).count()).toBe(0);
      await check(page, 'leads');

      await page.getByLabel('Status').selectOption('replied');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      await page.getByRole('link', { name: 'Northwind Traders' }).waitFor();

      await page.getByLabel('Status').selectOption('');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(50);
      await page.getByLabel('Search').fill('co12');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      await page.getByLabel('Search').fill('');

      await page.getByLabel('Status').selectOption('replied');
      await page.getByRole('link', { name: 'Northwind Traders' }).click();
      await page.getByRole('heading', { name: 'Northwind Traders', level: 1 }).waitFor();
      await page.getByText('dana@northwind.test', { exact: true }).waitFor();
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('imports a CSV: the preview lists the bad rows, the import runs to done with its counts and bad lines', {
    timeout: 120_000,
  }, async () => {
    const csv = [
      'Email,Full name,Website',
      'kim@globex.test,Kim Park,globex.test',
      'not-an-address,Nobody,',
      'lee@initech.test,Lee Wu,initech.test',
      'kim@globex.test,Kim Park,globex.test',
    ].join('\n');
    const { context, page, watch } = await signedInAsAna();
    try {
      await page.goto(`${served.base}/dashboard/leads/import`);
      await page.getByRole('heading', { name: 'Import leads', level: 1 }).waitFor();
      await page.getByLabel('CSV file').setInputFiles({ name: 'contacts.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
      await page.getByLabel('Mapping (optional)').fill('email=Email,name=Full name,domain=Website');
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.getByText('2 of these rows will not be imported.').waitFor();
      expect(await page.getByRole('cell', { name: /^Refused:/ }).count()).toBe(1);
      expect(await page.getByRole('cell', { name: /^Duplicate: repeats line 2/ }).count()).toBe(1);
      await page.getByRole('button', { name: 'Import' }).click();
      await page.getByText('Imported 2 contacts; 1 duplicate and 1 refused row left out.').waitFor({ timeout: 60_000 });
      await page.getByText(/Line 3: refused/).waitFor();
      await check(page, 'leads-import');

      const listed = await ana.request('get', '/dashboard/api/v1/leads?limit=100').expect(200);
      expect(listed.body.leads.map((l: { domain: string }) => l.domain)).toEqual(expect.arrayContaining(['globex.test', 'initech.test']));
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('adds to the block list and lists it, saying what could not be read', { timeout: 90_000 }, async () => {
    const { context, page, watch } = await signedInAsAna();
    try {
      await page.goto(`${served.base}/dashboard/leads/blocklist`);
      await page.getByRole('heading', { name: 'Block list', level: 1 }).waitFor();
      await page.getByLabel(/Block \(one domain/).fill('spam.test\nceo@rival.test\nnot a value');
      await page.getByRole('button', { name: 'Add to the block list' }).click();
      await page.getByText(/Added 2; 0 already listed\. Not a domain, address or profile URL: not a value\./).waitFor();
      await page.getByRole('rowheader', { name: 'spam.test' }).waitFor();
      await page.getByRole('rowheader', { name: 'ceo@rival.test' }).waitFor();
      await check(page, 'blocklist');
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('searches all the leads: finds one far past the first page by its contact', { timeout: 120_000 }, async ({ env }) => {
    await buildLead(env.deps.db, ana.accountId, {
      domain: 'deep-archive.test',
      companyName: 'Deep Archive',
      createdAt: Date.now() - 365 * 86_400_000,
      contacts: [{ email: 'morgan@deep-archive.test', name: 'Morgan Reyes' }],
    });
    const { context, page, watch } = await signedInAsAna();
    try {
      await page.goto(`${served.base}/dashboard/leads`);
      const rows = page.locator('tbody tr');
      await rows.first().waitFor();
      expect(await page.getByRole('link', { name: 'Deep Archive' }).count()).toBe(0);
      await page.getByLabel('Search').fill('morgan rey');
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      await page.getByRole('link', { name: 'Deep Archive' }).waitFor();
      await page.getByLabel('Search').fill('no such lead anywhere');
      await page.getByText('No leads match.').waitFor({ timeout: 15_000 });
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it("a lead's page: labels saved and shown, the server's error by its field, the timeline, the domain blocked", {
    timeout: 180_000,
  }, async ({ env, smtp }) => {
    const lead = await buildLead(env.deps.db, ana.accountId, {
      domain: 'contoso.test',
      companyName: 'Contoso',
      contacts: [{ email: 'ria@contoso.test', name: 'Ria Sen' }, { email: 'max@contoso.test' }],
      research: [{ key: 'hiring', reasoning: 'Three open sales roles', sources: [] }],
    });
    const send: SendCard = (cardId) => ana.request('post', `/dashboard/api/v1/review/${cardId}/send`).send({});
    const toRia = await shipMail(env, ana.accountId, send, 'ria@contoso.test', 'Hello Contoso');
    const toMax = await shipMail(env, ana.accountId, send, 'max@contoso.test', 'Hello Max');
    expect(await receiveAnswer(env, ana.accountId, 'gmail-reply', toRia)).toMatchObject({ status: 'applied', kind: 'reply' });
    expect(await receiveAnswer(env, ana.accountId, 'gmail-dsn-failure', toMax)).toMatchObject({ status: 'applied', kind: 'bounce' });
    await followMailLink(env, smtp, 'Hello Contoso');

    const { context, page, watch } = await signedInAsAna([400]);
    try {
      await page.goto(`${served.base}/dashboard/leads/${lead.id}`);
      await page.getByRole('heading', { name: 'Contoso', level: 1 }).waitFor();
      const timeline = page.locator('.timeline li');
      await timeline.first().waitFor();
      await page.getByText('Mail sent to ria@contoso.test').waitFor();
      await page.getByText('Mail sent to max@contoso.test').waitFor();
      await page.getByText('Replied (interested)').waitFor();
      await page.getByText('Bounced').waitFor();
      await page.getByText('Research: hiring').waitFor();
      expect(await timeline.count()).toBe(6);

      await page.getByLabel('Vertical').fill('Logistics');
      await page.getByLabel('Archetype').fill('Scale-up');
      await page.getByLabel('Tags').fill('warm, q3, warm');
      await page.getByRole('button', { name: 'Save labels' }).click();
      await page.getByText('Labels saved.').waitFor();
      await expect.poll(() => page.getByLabel('Tags').inputValue()).toBe('warm, q3');
      await page.locator('dl.facts').getByText('Logistics').waitFor();
      const stored = await ana.request('get', `/dashboard/api/v1/leads/${lead.id}`).expect(200);
      expect(stored.body.lead).toMatchObject({ vertical: 'Logistics', archetype: 'Scale-up', tags: ['warm', 'q3'] });

      await page.getByLabel('Vertical').fill('x'.repeat(121));
      await page.getByRole('button', { name: 'Save labels' }).click();
      // The error's id is named in aria-describedby only once the server's answer is shown: wait for it first.
      await expect.poll(() => page.getByLabel('Vertical').getAttribute('aria-invalid')).toBe('true');
      const fieldError = page.locator(`#${(await page.getByLabel('Vertical').getAttribute('aria-describedby'))!.split(' ')[1]!}`);
      await fieldError.waitFor();
      expect(await fieldError.textContent()).toBe('vertical must be at most 120 characters');
      expect(await page.getByLabel('Vertical').getAttribute('aria-invalid')).toBe('true');
      await page.getByLabel('Vertical').fill('Logistics');

      await page.getByRole('button', { name: 'Block this domain' }).click();
      await page.getByRole('button', { name: 'Block contoso.test' }).click();
      await page.getByText('contoso.test is now on the block list.').waitFor();
      const listed = await ana.request('get', '/dashboard/api/v1/blocklist?limit=200').expect(200);
      expect(listed.body.entries.map((e: { value: string }) => e.value)).toContain('contoso.test');
      await check(page, 'lead');
      clean(watch);
    } finally {
      await context.close();
    }
  });
});
