import { afterAll, describe, expect } from 'vitest';
import { axeViolations, type Browser, launchChromium, screenshot, serveApp, signedInPage } from '../helpers/browser.js';
import { type SignedInPerson, signedIn } from '../helpers/dashboard.js';
import { completion, llmEnv } from '../helpers/fake-llm.js';
import { agentOptions, it } from '../helpers/fixture.js';

/**
 * The agent chat in Debian's Chromium: a message sent from the page runs a real turn (the agent-turns pool
 * in-process, the model a scripted chat-completions stand-in on loopback); the page shows the turn working
 * until the reply, then links the card the turn filed to the review desk, which opens it.
 */

let served: Awaited<ReturnType<typeof serveApp>>;
let browser: Browser;
let ana: SignedInPerson;
it.override('options', ({ llm }) =>
  agentOptions(llmEnv(llm, { DASHBOARD_PASSWORD_MEMORY_KIB: '8192', DASHBOARD_PASSWORD_TIME_COST: '1' })),
);
it.beforeAll(async ({ agent: env }) => {
  served = await serveApp(env.app);
  ana = await signedIn(env, { name: 'Ana Lima', email: 'ana@agent.example' });
  browser = await launchChromium();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe('the agent chat in headless Chromium', () => {
  it('sends a message, shows the turn working until the reply, and links the card the turn filed to the review desk', {
    timeout: 90_000,
  }, async ({ llm }) => {
    // The model's first answer waits for the test: the page is seen working in the meantime.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    llm.script(
      async () => {
        await held;
        return {
          body: completion(null, [
            {
              id: 'c1',
              name: 'ship',
              args: { work: 'email', title: 'Intro to Globex', to: 'kim@globex.test', subject: 'Hello Kim', body: 'Hi Kim' },
            },
          ]),
        };
      },
      () => ({ body: completion('Drafted an intro to Kim; it is on your review desk.') }),
    );

    const { context, page, watch } = await signedInPage(browser, served.base, ana);
    try {
      await page.getByRole('navigation').getByRole('link', { name: 'Agent' }).click();
      await page.getByRole('heading', { name: 'Agent', level: 1 }).waitFor();
      await page.getByText('No messages yet.').waitFor();

      await page.getByLabel('Message').fill('Write an intro to Kim at Globex');
      await page.getByRole('button', { name: 'Send' }).click();
      await page.getByText('Write an intro to Kim at Globex').waitFor();
      await page.getByText(/The agent is working…|Waiting for the agent…/).waitFor();
      release();

      await page.getByText('Drafted an intro to Kim; it is on your review desk.').waitFor();
      const link = page.getByRole('link', { name: 'Intro to Globex' });
      await link.waitFor();
      expect(await page.getByText(/The agent is working…|Waiting for the agent…/).count()).toBe(0);
      const violations = await axeViolations(page);
      expect(violations, JSON.stringify(violations, null, 2)).toEqual([]);
      await screenshot(page, 'dashboard-agent');

      // The link opens that card on the desk.
      await link.click();
      await page.getByRole('heading', { name: 'Review', level: 1 }).waitFor();
      await page.getByRole('heading', { name: 'Intro to Globex', level: 2 }).waitFor();
      expect(page.url()).toMatch(/\/dashboard\/review\?card=card_/);
      expect([...watch.hosts]).toEqual([new URL(served.base).host]);
      expect(watch.failures).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('answers the cards of a message to its sender only: a colleague gets the 404 of an unknown id', async ({ agent: env }) => {
    const sent = await ana.request('post', '/dashboard/api/v1/agent/messages', { text: 'Anything new?' }).expect(202);
    const requestId = String(sent.body.requestId);
    const own = await ana.request('get', `/dashboard/api/agent/messages/${requestId}/cards`).expect(200);
    expect(own.body).toEqual({ items: expect.any(Array) });
    const bo = await signedIn(env, { role: 'member', accountId: ana.accountId, name: 'Bo Chen', email: 'bo@agent.example' });
    const theirs = await bo.request('get', `/dashboard/api/agent/messages/${requestId}/cards`).expect(404);
    const unknown = await bo.request('get', '/dashboard/api/agent/messages/turn_unknown/cards').expect(404);
    expect(theirs.body).toEqual(unknown.body);
  });
});
