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
import { closeLiveHub } from '../../src/review/live-stream.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { PASSWORD, type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { buildCard } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { smtpEnv } from '../helpers/smtp-server.js';

/**
 * The review desk in Debian's Chromium (headless, playwright-core): a mail card approved by keyboard alone
 * reaches the SMTP stand-in; two people act on one card and the one who lost is told who won; a card filed
 * while the desk is open appears without a reload. Each page passes axe-core and asks no other host.
 */

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let ana: SignedInPerson;
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1' },
}));
it.beforeAll(async ({ env }) => {
  served = await serveApp(env.app);
  ana = await signedIn(env, { name: 'Ana Lima', email: 'ana@review.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

/** A browser signed in through the sign-in page as `who`, then on the review desk with its live stream open. */
async function deskFor(who: { email: string; password: string }, expected: number[] = []) {
  const { context, page, watch } = await signedInPage(browser, served.base, who, { expected });
  await page.getByRole('navigation').getByRole('link', { name: 'Review' }).click();
  await page.getByRole('heading', { name: 'Review', level: 1 }).waitFor();
  await page.getByText('Live: new cards appear as they are filed.').waitFor();
  return { context, page, watch };
}

const STREAM = '**/dashboard/api/review/stream';

const queueItem = (page: Page, title: string | RegExp) =>
  page.getByRole('list', { name: 'Cards waiting for review' }).getByRole('button', { name: title });

/**
 * Ends the page's live stream (the process's streams close, as at a shutdown) and holds its reconnection until the
 * returned function is called; then the stream comes back and resumes after its last event.
 */
async function holdStream(page: Page, redis: Parameters<typeof closeLiveHub>[0]): Promise<() => Promise<void>> {
  let open = () => {};
  const held = new Promise<void>((r) => {
    open = r;
  });
  await page.route(STREAM, async (route) => {
    await held;
    await route.continue();
  });
  await closeLiveHub(redis);
  await page.getByText('Connecting to live updates…').waitFor();
  return async () => {
    open();
    await page.unroute(STREAM);
  };
}

const clean = (watch: ReturnType<typeof watchPage>) => {
  expect([...watch.hosts]).toEqual([new URL(served.base).host]);
  expect(watch.failures).toEqual([]);
};

describe('the review desk in headless Chromium', () => {
  it('sends a mail card by keyboard alone (Enter opens it, e sends it), and the SMTP stand-in receives the mail', {
    timeout: 90_000,
  }, async ({ env, smtp }) => {
    const card = await buildCard(env.deps.db, ana.accountId, 'mail_draft', {
      title: 'Intro to Acme',
      payload: {
        work: 'email',
        to: 'jane@acme.test',
        draft: { subject: 'Quick idea for Acme', body: 'Hi Jane,\n\nA short note <script>alert(1)</script> for you.' },
      },
    });
    const { context, page, watch } = await deskFor(ana);
    try {
      await queueItem(page, /Intro to Acme/).waitFor();
      // The heading has focus; the first card is the selected one.
      await page.keyboard.press('Enter');
      const frame = page.locator('iframe.mail-frame');
      await frame.waitFor();
      expect(await frame.getAttribute('sandbox')).toBe('');
      // The mail's text, escaped: the script is words in the frame, never an element.
      const inner = page.frameLocator('iframe.mail-frame');
      await inner.getByText('Quick idea for Acme').waitFor();
      expect(await inner.locator('script').count()).toBe(0);
      expect(await inner.getByText('<script>alert(1)</script>', { exact: false }).count()).toBe(1);
      // Its buttons come from the card's actions: the primary label, then the other verbs.
      const detail = page.getByRole('article');
      for (const name of ['Send', 'Request changes', 'Snooze', 'Dismiss'])
        expect(await detail.getByRole('button', { name, exact: true }).count(), name).toBe(1);
      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
      await screenshot(page, 'dashboard-review');

      await page.keyboard.press('e');
      await page.getByText('Sent: “Intro to Acme”.').waitFor();
      const mail = await until(
        async () => smtp.received.find((m) => m.to.includes('jane@acme.test') && m.raw.includes('Quick idea for Acme')),
        15_000,
      );
      expect(mail.raw).toContain('Hi Jane');
      const stored = await ana.request('get', `/dashboard/api/v1/review/${card.id}`).expect(200);
      expect(stored.body.item.status).toBe('sent');
      expect(await queueItem(page, /Intro to Acme/).count()).toBe(0);
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('two people on one card: Ana dismisses it with a reason, and Bo’s desk says “Dismissed by Ana Lima”', {
    timeout: 90_000,
  }, async ({ env }) => {
    const bo = await signedIn(env, { role: 'member', accountId: ana.accountId, name: 'Bo Chen', email: 'bo@review.example' });
    const card = await buildCard(env.deps.db, ana.accountId, 'plain', { title: 'Go ahead with the Midwest list?' });
    const a = await deskFor(ana);
    const b = await deskFor({ email: bo.email, password: PASSWORD }, [409]);
    try {
      await queueItem(b.page, /Midwest list/).click();
      await b.page.getByRole('article').getByRole('button', { name: 'Approve', exact: true }).waitFor();

      await queueItem(a.page, /Midwest list/).waitFor();
      await a.page.keyboard.press('Enter');
      await a.page.getByRole('article').waitFor();
      // r opens the change request's text; Escape steps back out of it.
      await a.page.keyboard.press('r');
      await a.page.getByLabel('What should change?').waitFor();
      await a.page.keyboard.press('Escape');
      await a.page.getByLabel('What should change?').waitFor({ state: 'detached' });
      await a.page.keyboard.press('d');
      await a.page.getByLabel(/Why dismiss it/).fill('Wrong region for now');
      await a.page.getByRole('form', { name: 'Dismiss' }).getByRole('button', { name: 'Dismiss' }).press('Enter');
      await a.page.getByText('Dismissed: “Go ahead with the Midwest list?”.').waitFor();

      // Bo's desk hears it from the stream: the card leaves, saying who.
      await b.page.getByText('Dismissed by Ana Lima: “Go ahead with the Midwest list?”.').waitFor();
      expect(await queueItem(b.page, /Midwest list/).count()).toBe(0);

      const stored = await ana.request('get', `/dashboard/api/v1/review/${card.id}`).expect(200);
      expect(stored.body.item.status).toBe('dismissed');
      clean(a.watch);
      clean(b.watch);
    } finally {
      await a.context.close();
      await b.context.close();
    }
  });

  it('a dismiss that loses the race before the stream tells the desk: no error, then who and when, once, and the card leaves', {
    timeout: 90_000,
  }, async ({ env }) => {
    const bo = await signedIn(env, { role: 'member', accountId: ana.accountId, name: 'Bo Chen', email: 'bo3@review.example' });
    const card = await buildCard(env.deps.db, ana.accountId, 'plain', { title: 'Go ahead with the Nordics list?' });
    const { context, page, watch } = await deskFor(ana, [409]);
    try {
      await queueItem(page, /Nordics list/).click();
      await page.getByRole('article').getByRole('heading', { name: 'Go ahead with the Nordics list?' }).waitFor();
      // Every text the live region says, in order: a second report of the same card would show here.
      await page.evaluate(`(() => {
        const region = document.querySelector('[aria-live="polite"]');
        const said = (globalThis.said = []);
        new MutationObserver(() => {
          const text = region.textContent;
          if (text && text !== said.at(-1)) said.push(text);
        }).observe(region, { childList: true, subtree: true, characterData: true });
      })()`);

      // The page's stream ends (the process's streams close, as at a shutdown) and its reconnection is held until
      // released: Bo's dismiss reaches the account's backlog, not yet this page.
      const release = await holdStream(page, env.deps.redis);
      await bo.request('post', `/dashboard/api/v1/review/${card.id}/dismiss`, {}).expect(200);

      // Ana dismisses by keyboard alone; the service answers 409. No error is shown, and nothing said yet.
      const lost = page.waitForResponse((r) => r.url().endsWith(`/review/${card.id}/dismiss`) && r.request().method() === 'POST');
      await page.keyboard.press('d');
      await page.getByLabel(/Why dismiss it/).waitFor();
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      expect((await lost).status()).toBe(409);
      await page.getByRole('form', { name: 'Dismiss' }).waitFor({ state: 'detached' });
      expect(await page.getByRole('alert').count()).toBe(0);

      // The stream comes back, resumes after its last event, and Bo's dismiss names him, once; the card leaves.
      await release();
      const said = /^Dismissed by Bo Chen at \d{1,2}:\d{2}(\s?[AP]M)?: “Go ahead with the Nordics list\?”\.$/;
      await page.getByText(said).waitFor();
      await queueItem(page, /Nordics list/).waitFor({ state: 'detached' });
      await page.getByText('Live: new cards appear as they are filed.').waitFor();
      const notices = (await page.evaluate('globalThis.said')) as string[];
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(said);
      expect(await page.getByRole('alert').count()).toBe(0);
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('a card filed while the desk is open appears without a reload; a colleague taking the card being answered is named', {
    timeout: 90_000,
  }, async ({ env }) => {
    const { context, page, watch } = await deskFor(ana, [409]);
    try {
      const navigations: string[] = [];
      page.on('framenavigated', (f) => {
        if (f === page.mainFrame()) navigations.push(f.url());
      });
      const card = await buildCard(env.deps.db, ana.accountId, 'question', { title: 'Which region first?' });
      await queueItem(page, /Which region first/).waitFor();
      await page.getByText('New card: “Which region first?”.').waitFor();
      expect(navigations).toEqual([]);

      // ? shows the key sheet; Escape closes it.
      await page.keyboard.press('?');
      await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
      await page.keyboard.press('Escape');
      await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor({ state: 'detached' });

      // A question's verbs: Answer (with its text), Approve, Snooze with its choices, Dismiss.
      await queueItem(page, /Which region first/).click();
      await page.keyboard.press('s');
      const snooze = page.getByRole('form', { name: 'Snooze' });
      for (const choice of ['One hour', 'Four hours', 'Tomorrow at 9:00', 'Next Monday at 9:00'])
        expect(await snooze.getByRole('radio', { name: choice }).count(), choice).toBe(1);
      await page.keyboard.press('Escape');
      await page.keyboard.press('e');
      await page.getByLabel('Your answer').fill('The Midwest');

      // Someone with a token answers first, through /api/v1: the page's answer is a 409, and it says who.
      const bo = await signedIn(env, { role: 'member', accountId: ana.accountId, name: 'Bo Chen', email: 'bo2@review.example' });
      await bo.request('post', `/dashboard/api/v1/review/${card.id}/dismiss`, {}).expect(200);
      await page.getByText('Dismissed by Bo Chen: “Which region first?”.').waitFor();
      expect(await queueItem(page, /Which region first/).count()).toBe(0);
      clean(watch);
    } finally {
      await context.close();
    }
  });

  it('names the trust ladder when it approves a card the desk shows, and with the time when a person’s approve lost to it', {
    timeout: 90_000,
  }, async ({ env }) => {
    const { context, page, watch } = await deskFor(ana, [409]);
    try {
      // A card the ladder will approve in an hour: the desk says so in words; its deadline job runs now (as when due).
      const at = Date.now() + 3_600_000;
      const first = await buildCard(env.deps.db, ana.accountId, 'plain', { title: 'Post the launch note?', autoResolveAt: at });
      await queueItem(page, /Post the launch note/).click();
      await page.getByText(/The trust ladder approves it in (59 minutes|1 hour) unless someone acts first\./).waitFor();
      expect(await autoResolve(env.deps, ana.accountId, first.id, at)).toBe('resolved');
      await page.getByText('Approved by the trust ladder: “Post the launch note?”.').waitFor();
      await queueItem(page, /Post the launch note/).waitFor({ state: 'detached' });

      // The ladder approves while the stream is held: the person's approve is a 409, and once the stream is back the
      // desk says the trust ladder did it, and when.
      const second = await buildCard(env.deps.db, ana.accountId, 'plain', { title: 'Share the case study?', autoResolveAt: at });
      await queueItem(page, /Share the case study/).click();
      const release = await holdStream(page, env.deps.redis);
      expect(await autoResolve(env.deps, ana.accountId, second.id, at)).toBe('resolved');
      const lost = page.waitForResponse((r) => r.url().endsWith(`/review/${second.id}/answer`) && r.request().method() === 'POST');
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      expect((await lost).status()).toBe(409);
      await release();
      await page.getByText(/^Approved by the trust ladder at \d{1,2}:\d{2}(\s?[AP]M)?: “Share the case study\?”\.$/).waitFor();
      await queueItem(page, /Share the case study/).waitFor({ state: 'detached' });
      clean(watch);
    } finally {
      await context.close();
    }
  });
});
