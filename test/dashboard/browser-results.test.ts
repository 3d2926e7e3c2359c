import { readFileSync } from 'node:fs';
import { afterAll, describe, expect } from 'vitest';
import { upsertLead } from '../../src/leads/leads.service.js';
import { proposeExperiment } from '../../src/experiments/experiments.service.js';
import { buildLead } from '../helpers/factories.js';
import { axeViolations, type Browser, launchChromium, type Page, screenshot, serveApp, signedInPage } from '../helpers/browser.js';
import { type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { it } from '../helpers/fixture.js';
import { answered, INTERESTED, replyMime } from '../helpers/mail-reply.js';
import { until } from '../helpers/processes.js';
import { row } from '../helpers/rows.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { mailLoopOptions } from '../helpers/smtp-server.js';

/**
 * The scoreboard in Debian's Chromium: every channel section GET /api/v1/results answers is shown, with its figures
 * against the baseline or the reason it has none; the charts show each channel's figures over time from the series
 * route, with the same numbers in a table (and a CSV download); the window picker asks the server again. A real mail
 * goes out through the SMTP stand-in and its reply comes back over SMTP to the service's inbound listener, and the
 * email chart counts both. axe-core finds nothing serious; the page asks no other host.
 */

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let ana: SignedInPerson;
it.override('options', ({ smtp }) => mailLoopOptions(smtp, { DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1' }));
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  ana = await signedIn(env, { name: 'Ana Lima', email: 'ana@results.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

const channelCard = (page: Page, name: string) =>
  page.locator('article.channel').filter({ has: page.getByRole('heading', { name, level: 2 }) });

/** A column of a table as numbers, by its header's text. */
async function column(table: ReturnType<Page['locator']>, header: string): Promise<string[]> {
  const headers = await table.locator('thead th').allTextContents();
  const at = headers.indexOf(header);
  expect(at, `${header} in ${headers.join(', ')}`).toBeGreaterThan(0);
  return (await table.locator('tbody tr').all()).length ? await table.locator(`tbody tr > :nth-child(${at + 1})`).allTextContents() : [];
}
const total = (cells: string[]) => cells.reduce((a, c) => a + Number(c.replace(/,/g, '')), 0);

describe('the scoreboard in headless Chromium', () => {
  it('shows each channel the results route answers, its figures or why it has none, for the window picked', {
    timeout: 90_000,
  }, async ({ env }) => {
    // An experiment proposed to 120 contacts, waiting for a person: on the scoreboard with its plan and no winner.
    for (let i = 0; i < 120; i++) await buildLead(env.deps.db, ana.accountId, { contacts: [{ email: `person${i}@co${i}.test` }] });
    const proposal = await proposeExperiment(
      env.deps.db,
      { accountId: ana.accountId, turnId: null, fromOutside: false },
      {
        thing: 'mail_subject',
        topic: 'onboarding',
        draft: { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' },
        challengers: ['Quick question about onboarding'],
        baselineRate: 0.1,
        minimumDetectableEffect: 0.4,
      },
    );
    expect(typeof proposal).not.toBe('string');
    const api = await ana.request('get', '/dashboard/api/v1/results').expect(200);
    const channels = Object.entries(api.body.results as Record<string, { available?: boolean; reason?: string }>).filter(
      ([k, v]) => k !== 'harness' && v && typeof v === 'object' && 'available' in v,
    );
    expect(channels.length).toBeGreaterThan(0);

    const { context, page, watch } = await signedInPage(browser, served.base, ana);
    const asked: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/dashboard/api/')) asked.push(r.url());
    });
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Results' }).click();
      await page.getByRole('heading', { name: 'Results', level: 1 }).waitFor();
      await page.locator('article.channel').first().waitFor();
      expect(await page.locator('article.channel').count()).toBe(channels.length);
      for (const [, v] of channels.filter(([, v]) => v.available === false))
        expect(await page.getByText(`Not available: ${v.reason}`).count()).toBeGreaterThan(0);
      // The agent's own work: a table of the window against the baseline (zero turns here, shown as 0, not unknown).
      const harness = page.locator('section.harness');
      const turns = harness.getByRole('row', { name: /^Turns/ });
      expect(await turns.getByRole('cell').allTextContents()).toEqual(['0', '0']);
      const experiment = page.locator('article.experiment');
      await expect.poll(() => experiment.getByRole('heading', { level: 3 }).textContent()).toBe('Mail subject: onboarding');
      expect(await experiment.locator('.decision').textContent()).toBe(
        'Proposed: waiting for a person to approve it. Nothing has been sent.',
      );
      const variants = experiment.getByRole('table');
      expect(await variants.locator('tbody th').allTextContents()).toEqual(['A', 'B']);
      expect(await variants.getByRole('row', { name: /^A/ }).getByRole('cell').last().textContent()).toBe('the control');
      // No exposures yet: counts are 0, the rate and its interval not there yet (unknown, not 0%).
      expect(await variants.getByRole('row', { name: /^B/ }).getByRole('cell').allTextContents()).toEqual([
        '"Quick question about onboarding"',
        '0',
        '0',
        '0',
        'none yet',
        'none yet',
        'none yet',
      ]);
      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);

      await page.getByLabel('Window').selectOption({ label: 'The last 7 days' });
      await expect.poll(() => asked.filter((u) => u.includes('/results/series?window=7d')).length, { timeout: 15_000 }).toBe(1);
      const weekAsk = asked.filter((u) => u.includes('/v1/results?')).at(-1)!;
      expect(Date.now() - Number(new URL(weekAsk).searchParams.get('since'))).toBeGreaterThanOrEqual(7 * 24 * 3_600_000);
      await page.locator('article.channel').first().waitFor();
      // 30 days: charted by the day; the totals (the results route clamps at 7 days) say how far they reach.
      await page.getByLabel('Window').selectOption({ label: 'The last 30 days' });
      await page.getByText('Totals reach back 7 days at most; the charts show the whole window.').waitFor();
      expect(asked.filter((u) => u.includes('/results/series?window=30d'))).toHaveLength(1);
      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("the scoreboard's charts render real counts after a send and a reply", { timeout: 150_000 }, async ({ env, smtp, inbound }) => {
    const jane = 'jane@acme-results.test';
    const bo = await signedIn(env, { name: 'Bo Chen', email: 'bo@results.example' });
    await upsertLead(env.deps.db, bo.accountId, { domain: 'acme-results.test', contacts: [{ name: 'Jane Doe', email: jane }] });
    // The agent drafts a mail (through the dashboard, as the person); the person sends it; it reaches the SMTP stand-in.
    const said = await bo.request('post', '/dashboard/api/v1/agent/messages', {
      text: `draft an email to ${jane} about a quick idea for Acme`,
      waitSeconds: 10,
    });
    expect(said.status).toBe(200);
    const queue = await bo.request('get', '/dashboard/api/v1/review').expect(200);
    const card = (queue.body.items as { id: string; sourceType: string }[]).find((c) => c.sourceType === 'mail_draft')!;
    await bo.request('post', `/dashboard/api/v1/review/${card.id}/send`, {}).expect(200);
    const mail = await until(async () => smtp.received.find((m) => m.raw.includes(`<${jane}>`) || m.raw.includes(jane)) ?? null, 30_000);
    // Jane answers over SMTP to the service's inbound listener, In-Reply-To our Message-ID; the inbound pool applies it.
    const a = await answered(mail.raw);
    expect((await smtpSend(inbound.port, { from: a.to, to: [a.replyTo], raw: replyMime(a, INTERESTED) })).code).toBe(250);
    await until(async () => {
      const r = await row(env, 'inbound_messages', { account_id: bo.accountId });
      return r?.status === 'applied' ? r : null;
    }, 30_000);

    const { context, page, watch } = await signedInPage(browser, served.base, bo);
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Results' }).click();
      const email = channelCard(page, 'Email');
      await email.locator('figure').waitFor();
      // The chart drew (uPlot's canvas), and its accessible alternatives carry the counts.
      await email.locator('.series-chart canvas').first().waitFor();
      await expect.poll(() => email.locator('figcaption').textContent()).toMatch(/sent 1, replies 1,/);
      await email.getByText('The figures per hour as a table').click();
      const table = email.locator('figure details table');
      expect(total(await column(table, 'Sent'))).toBe(1);
      expect(total(await column(table, 'Replies'))).toBe(1);
      // Against the baseline: one sent and one reply in the window, none before.
      expect(await email.getByRole('row', { name: /^Sent/ }).getByRole('cell').allTextContents()).toEqual(['1', '0']);
      expect(
        await email
          .getByRole('row', { name: /^Replies/ })
          .getByRole('cell')
          .allTextContents(),
      ).toEqual(['1', '0']);

      // The hourly table as CSV: RFC 4180, one record per hour, the counts as numbers.
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        email.locator('figure').getByRole('button', { name: 'Download CSV' }).click(),
      ]);
      const csv = readFileSync((await download.path())!, 'utf8');
      const records = csv.split('\r\n').filter(Boolean);
      expect(records[0]).toMatch(/^Hour,Sent,Replies,/);
      expect(records).toHaveLength(25);
      expect(records.slice(1).reduce((n, r) => n + Number(r.split(',')[1]), 0)).toBe(1);

      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
      // The picture shows the charts, with the hourly table folded again.
      await email.getByText('The figures per hour as a table').click();
      await screenshot(page, 'dashboard-results');
      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
