import os from 'node:os';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { createAccount } from '../src/accounts/accounts.service.js';
import { adminActor } from '../src/audit/audit.service.js';
import { createDb, type Db } from '../src/db.js';
import { newId } from '../src/ids.js';
import { createPerson } from '../src/people/people.service.js';
import { registerCardWrites } from '../src/queue-version/card-writes.js';
import { createRedis, keyspace, whenReady } from '../src/redis.js';
import { addCard, waitingCards } from '../src/review/cards/doors.js';
import { seedReviewCards } from '../src/review/seed.js';
import { type Browser, launchChromium, type Page } from '../test/helpers/browser.js';
import { configWith } from '../test/helpers/config.js';
import { dropPrefix, fmt, freePort, median, NO_RATE_LIMITS, seeding, startServer, stop } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PASSWORD = 'correct horse battery staple';
const PREFIX = '{gasdesk}';
const BIG = Number(process.env.BENCH_DESK_CARDS ?? 1_000);
const SMALL = 10;
/** Page loads of each desk; each one dismisses and snoozes ACTIONS cards of each and waits for one filed card. */
const RUNS = Number(process.env.BENCH_DESK_RUNS ?? 7);
const ACTIONS = 2;
const RAW_GETS = 40;

/**
 * Measures, in the page (performance.now(), whose zero is the navigation's start):
 * - `usable`: the first two queue rows are in the DOM and a `j` key sent to the page has moved the selection to
 *   the second (so the desk's key handler holds the list); `firstCard` when the rows first appeared. A `j` the
 *   page is not yet listening for is lost, so it is sent again every 5 ms until one is answered.
 * - `__deskArm(id)`: the time from the next Enter key (seen first, in the capture phase) to the moment the card's
 *   row leaves the DOM.
 * - `__deskArrival(title)`: the wall-clock time (ms since the epoch) a row with that title enters the DOM.
 * A plain script, not a function: the page runs it as written (tsx's helpers are not in the page).
 */
const INSTRUMENT = `(() => {
  let ready;
  const d = (window.__desk = { firstCard: null, usable: null, ready: new Promise((r) => (ready = r)) });
  let poke = null;
  const check = () => {
    if (d.usable !== null) return;
    const items = document.querySelectorAll('.queue-open');
    if (items.length < 2) return;
    if (d.firstCard === null) d.firstCard = performance.now();
    if (items[1].getAttribute('aria-current') === 'true') {
      d.usable = performance.now();
      clearTimeout(poke);
      ready({ firstCard: d.firstCard, usable: d.usable });
      return;
    }
    document.body.dispatchEvent(new KeyboardEvent('keydown', { key: 'j', bubbles: true }));
    clearTimeout(poke);
    poke = setTimeout(check, 5);
  };
  const watch = new MutationObserver(check);
  document.addEventListener('DOMContentLoaded', () =>
    watch.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ['aria-current'] }),
  );
  window.__deskArm = (id) =>
    new Promise((resolve) => {
      let keyAt = null;
      const onKey = (e) => {
        if (e.key === 'Enter' && keyAt === null) keyAt = performance.now();
      };
      window.addEventListener('keydown', onKey, true);
      const o = new MutationObserver(() => {
        if (keyAt === null || document.querySelector('[data-card-id="' + id + '"]')) return;
        const at = performance.now();
        o.disconnect();
        window.removeEventListener('keydown', onKey, true);
        const post = performance
          .getEntriesByType('resource')
          .filter((e) => e.name.includes('/v1/review/' + id + '/'))
          .pop();
        resolve({ total: at - keyAt, post: post ? post.responseEnd - post.startTime : Number.NaN });
      });
      o.observe(document.body, { childList: true, subtree: true });
      setTimeout(() => resolve({ total: Number.NaN, post: Number.NaN }), 30000);
    });
  window.__deskArrival = (title) =>
    new Promise((resolve) => {
      const seen = () => [...document.querySelectorAll('.queue-title')].some((t) => t.textContent === title);
      const o = new MutationObserver(() => {
        if (!seen()) return;
        o.disconnect();
        resolve(performance.timeOrigin + performance.now());
      });
      o.observe(document.body, { childList: true, subtree: true, characterData: true });
      setTimeout(() => resolve(Number.NaN), 30000);
    });
})();`;

interface Desk {
  label: string;
  accountId: string;
  cookie: string;
  size: number;
}

interface Run {
  firstCard: number;
  usable: number;
  /** When the queue's GET was answered, from the navigation's start. */
  queueRead: number;
  actions: { total: number; post: number }[];
  arrival: number;
  scripts: { url: string; transfer: number; body: number }[];
}

/** A plain approval card as the agent files one (its actions and label are the card shape's). */
const approvalCard = (accountId: string, title: string) => ({
  id: newId('card'),
  accountId,
  kind: 'approval' as const,
  sourceType: 'agent_approval',
  title,
  payload: {},
  actions: [],
  primaryLabel: '',
  ladderChecked: true,
});

/** Keeps `n` cards waiting (plain approvals added; the demo cards were the first ones). */
async function topUp(db: Db, accountId: string, n: number): Promise<void> {
  const { count } = await waitingCards(db, accountId, 1);
  for (let i = count; i < n; i++) {
    await addCard(db, {
      ...approvalCard(accountId, `Go ahead with list ${i + 1}?`),
      summary: 'A list the agent built for the next sequence.',
    });
  }
}

/**
 * One keyboard action on the selected card (d: dismiss without a reason; s: snooze for an hour): key to row gone,
 * and of that the POST's own time (its Resource Timing: request sent to answer read), ms.
 */
async function keyAction(page: Page, verb: 'dismiss' | 'snooze'): Promise<{ total: number; post: number }> {
  const id = await page.evaluate(`document.querySelector('.queue-open[aria-current="true"]').dataset.cardId`);
  if (verb === 'dismiss') {
    await page.keyboard.press('d');
    await page.getByLabel(/Why dismiss it/).waitFor();
  } else {
    await page.keyboard.press('s');
    await page.getByRole('radio', { name: 'One hour' }).waitFor();
    await page.keyboard.press('Space');
  }
  await page.keyboard.press('Tab');
  await page.evaluate(`window.__armed = window.__deskArm(${JSON.stringify(id)}); 0`);
  await page.keyboard.press('Enter');
  const took = (await page.evaluate('window.__armed')) as { total: number; post: number };
  if (Number.isNaN(took.total)) throw new Error(`the ${verb} by keyboard did not take card ${id} off the desk within 30 s`);
  return took;
}

/** A cold page load of the desk (a new context: no cached script), its actions, and one card filed by the service. */
async function deskRun(browser: Browser, base: string, db: Db, desk: Desk): Promise<Run> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addCookies([{ name: 'gas_session', value: desk.cookie, url: base }]);
  await context.addInitScript(INSTRUMENT);
  const page = await context.newPage();
  try {
    await page.goto(`${base}/dashboard/review`);
    // A string, evaluated by the DevTools protocol: the page's CSP refuses waitForFunction's eval.
    const { firstCard, usable } = (await page.evaluate('window.__desk.ready')) as { firstCard: number; usable: number };
    const queueRead = (await page.evaluate(
      `performance.getEntriesByType('resource').find((e) => e.name.includes('/v1/review?')).responseEnd`,
    )) as number;
    const scripts = (await page.evaluate(
      `performance.getEntriesByType('resource').filter((e) => new URL(e.name).pathname.endsWith('.js'))
        .map((e) => ({ url: e.name, transfer: e.transferSize, body: e.encodedBodySize }))`,
    )) as Run['scripts'];
    if (process.env.BENCH_DESK_TRACE) {
      // The load's timeline, to see where a slow load went: each request's start and end, and the paints.
      const trace = await page.evaluate(
        `[...performance.getEntriesByType('navigation'), ...performance.getEntriesByType('resource'),
          ...performance.getEntriesByType('paint')]
          .map((e) => e.entryType + ' ' + e.name.replace(location.origin, '') + ' ' + Math.round(e.startTime) + '→'
            + Math.round(e.responseEnd ?? e.startTime)
            + (e.domContentLoadedEventEnd ? ' dcl ' + Math.round(e.domContentLoadedEventEnd) : '')).join('\\n')`,
      );
      process.stderr.write(`${desk.label}: first rows ${Math.round(firstCard)}, usable ${Math.round(usable)}\n${trace}\n`);
    }
    await page.getByText('Live: new cards appear as they are filed.').waitFor();
    const actions: Run['actions'] = [];
    for (let i = 0; i < ACTIONS; i++) {
      actions.push(await keyAction(page, 'dismiss'));
      actions.push(await keyAction(page, 'snooze'));
    }
    const title = `Filed by the bench ${newId('t')}`;
    await page.evaluate(`window.__arrived = window.__deskArrival(${JSON.stringify(title)}); 0`);
    const filedAt = performance.timeOrigin + performance.now();
    await addCard(db, approvalCard(desk.accountId, title));
    const arrival = ((await page.evaluate('window.__arrived')) as number) - filedAt;
    if (Number.isNaN(arrival)) throw new Error('the filed card did not reach the desk within 30 s');
    return { firstCard, usable, queueRead, actions, arrival, scripts };
  } finally {
    await context.close();
  }
}

const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`;

/**
 * The review desk in headless Chromium (Debian's, as the browser tests launch it) against the API process:
 * 1,000 waiting cards against 10 in the same run, each page load cold, interleaved; and the raw GET of the
 * queue the desk reads, from Node, as the floor. Targets: usable within 1 s of navigation, an action's
 * result within 150 ms of its key, a filed card shown within 2 s, at most 200 KB of compressed script.
 */
export async function dashboardDesk(ctx: BenchContext): Promise<Section> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, BASE_URL: base, QUEUE_PREFIX: PREFIX });
  const stamp = newId('p').slice(2).toLowerCase();
  const people = await seeding(config, async (db) => {
    const made = [];
    for (const [label, size] of [
      [`${BIG.toLocaleString('en-US')} waiting cards`, BIG],
      [`${SMALL} waiting cards`, SMALL],
    ] as const) {
      const account = await createAccount(db, `Desk bench ${size}`);
      const email = `desk-${size}-${stamp}@example.com`;
      await createPerson({ config, db }, adminActor(account.id, 'person create'), {
        accountId: account.id,
        email,
        name: 'Bench Person',
        role: 'owner',
        password: PASSWORD,
      });
      for (let seeded = 0; seeded + 9 <= size; seeded += 9) await seedReviewCards(db, account.id);
      made.push({ label, size, accountId: account.id, email });
    }
    return made;
  });
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: config.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      BASE_URL: base,
      QUEUE_PREFIX: PREFIX,
      LOG_LEVEL: 'warn',
      LIVE_STREAMS_PER_SESSION: '1000',
      LIVE_STREAMS_PER_ACCOUNT: '1000',
      ...NO_RATE_LIMITS,
    },
    `${base}/healthz`,
  );
  const db = createDb(config.databaseUrl, 2);
  const redis = createRedis(config, 'producer');
  registerCardWrites(db, { redis, keyspace: keyspace(config.queuePrefix) });
  await whenReady(redis);
  let browser: Browser | null = null;
  try {
    const desks: Desk[] = [];
    for (const p of people) {
      const res = await fetch(`${base}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ email: p.email, password: PASSWORD }),
      });
      if (res.status !== 200) throw new Error(`sign-in answered ${res.status}`);
      const cookie = res.headers
        .getSetCookie()
        .find((c) => c.startsWith('gas_session='))!
        .split(';')[0]!
        .slice('gas_session='.length);
      desks.push({ label: p.label, accountId: p.accountId, cookie, size: p.size });
    }
    browser = await launchChromium();
    const loadBefore = os.loadavg()[0]!;
    // One load of each first, not counted: Chromium's and the server's first-time costs.
    for (const desk of desks) {
      await topUp(db, desk.accountId, desk.size);
      await deskRun(browser, base, db, desk);
    }
    const runs = new Map<string, Run[]>(desks.map((d) => [d.label, []]));
    const raw = new Map<string, number[]>(desks.map((d) => [d.label, []]));
    for (let i = 0; i < RUNS; i++) {
      for (const desk of desks) {
        await topUp(db, desk.accountId, desk.size);
        runs.get(desk.label)!.push(await deskRun(browser, base, db, desk));
      }
    }
    // The floor: the queue read the desk makes, from Node with the same cookie, interleaved.
    const page = new Map<string, number[]>([['GET /dashboard/review (the page itself)', []]]);
    for (let i = 0; i < RAW_GETS; i++) {
      for (const desk of desks) {
        const start = performance.now();
        const res = await fetch(`${base}/dashboard/api/v1/review?limit=100`, { headers: { cookie: `gas_session=${desk.cookie}` } });
        await res.arrayBuffer();
        raw.get(desk.label)!.push(performance.now() - start);
      }
      const start = performance.now();
      await (await fetch(`${base}/dashboard/review`)).arrayBuffer();
      page.get('GET /dashboard/review (the page itself)')!.push(performance.now() - start);
    }

    // The first screen's scripts (the same in every run: one build), raw, as sent, and compressed.
    const first = runs.get(desks[0]!.label)![0]!.scripts;
    const sizes = await Promise.all(
      first.map(async (s) => {
        const body = Buffer.from(await (await fetch(s.url)).arrayBuffer());
        return {
          name: new URL(s.url).pathname.split('/').pop()!,
          raw: body.length,
          sent: s.transfer,
          gzip: gzipSync(body, { level: 9 }).length,
          brotli: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }).length,
        };
      }),
    );
    const total = (k: 'raw' | 'sent' | 'gzip' | 'brotli') => sizes.reduce((a, s) => a + s[k], 0);

    const rows = desks.map((d) => {
      const rs = runs.get(d.label)!;
      const acts = rs.flatMap((r) => r.actions);
      return {
        label: d.label,
        firstCard: median(rs.map((r) => r.firstCard)),
        usable: median(rs.map((r) => r.usable)),
        queueRead: median(rs.map((r) => r.queueRead)),
        post: median(acts.map((a) => a.post)),
        afterPost: median(acts.map((a) => a.total - a.post)),
        usableMax: Math.max(...rs.map((r) => r.usable)),
        action: median(acts.map((a) => a.total)),
        actionMax: Math.max(...acts.map((a) => a.total)),
        arrival: median(rs.map((r) => r.arrival)),
        arrivalMax: Math.max(...rs.map((r) => r.arrival)),
        raw: median(raw.get(d.label)!),
        actions: acts.length,
      };
    });
    const [big, small] = rows as [(typeof rows)[0], (typeof rows)[0]];
    const ms = (n: number) => fmt(n, 0);
    const verdict = (ok: boolean) => (ok ? 'met' : '**missed**');
    return {
      title: 'The review desk in a browser',
      body: [
        `Debian's Chromium, headless (playwright-core, launched as the browser tests launch it), against the API process on ` +
          `loopback; ${RUNS} page loads of each desk, interleaved, each in a new browser context (nothing cached), after one ` +
          `uncounted load of each; medians, and the slowest run beside them. Each load then dismisses and snoozes ${ACTIONS} ` +
          `cards by keyboard (d Tab Enter; s Space Tab Enter), and the service files one card (the card-writes path, as the ` +
          `agent files one) while the desk is open. The queues are topped up before each load.`,
        '',
        '- **Usable**: from the navigation\u2019s start to the moment the first rows are drawn and a `j` key sent to the page has ' +
          'moved the selection to the second card (so the key handler holds the list). The desk shows the newest 100 cards ' +
          '(the API\u2019s page limit), so 1,000 waiting cards draw 100 rows.',
        '- **Action**: from the Enter key that submits the dismiss or snooze to the moment the card\u2019s row leaves the DOM ' +
          '(the answer of its POST applied); measured in the page.',
        '- **Filed card shown**: from just before the insert of the card, in Node, to its row entering the DOM (the stream\u2019s ' +
          '`card.filed`, then the card\u2019s GET); wall clocks of the same machine.',
        '',
        '| desk | queue read answered ms | first rows drawn ms | usable ms (slowest) | action ms (slowest of n) | ' +
          'of which its POST ms | filed card shown ms (slowest) | raw `GET /dashboard/api/v1/review?limit=100` ms |',
        '|---|---:|---:|---:|---:|---:|---:|---:|',
        ...rows.map(
          (r) =>
            `| ${r.label} | ${ms(r.queueRead)} | ${ms(r.firstCard)} | ${ms(r.usable)} (${ms(r.usableMax)}) | ` +
            `${ms(r.action)} (${ms(r.actionMax)} of ${r.actions}) | ${ms(r.post)} | ` +
            `${ms(r.arrival)} (${ms(r.arrivalMax)}) | ${fmt(r.raw, 1)} |`,
        ),
        `| the page itself, \`GET /dashboard/review\` (index.html) from Node | | | | | | | ` +
          `${fmt(median(page.get('GET /dashboard/review (the page itself)')!), 1)} |`,
        '',
        `The machine\u2019s load average (1 minute) was ${fmt(loadBefore, 1)} when the desks were first loaded and ` +
          `${fmt(os.loadavg()[0]!, 1)} at the end, on ${os.cpus().length} cores: the browser, the API process and Postgres ` +
          'waited for a core much of the time, so read the ratios and the split: the client\u2019s own part of an action is ' +
          `the action less its POST (${ms(big.afterPost)} ms for ${BIG.toLocaleString('en-US')} cards, ${ms(small.afterPost)} ms for ` +
          `${SMALL}), and of a load what follows the queue\u2019s answer (usable less queue read answered).`,
        '',
        `With ${BIG.toLocaleString('en-US')} cards against ${SMALL}: usable ${fmt(big.usable / small.usable, 2)}×, an action ` +
          `${fmt(big.action / small.action, 2)}×, a filed card ${fmt(big.arrival / small.arrival, 2)}×; the queue\u2019s raw read ` +
          `${fmt(big.raw / small.raw, 2)}×.`,
        '',
        `Targets (the ${BIG.toLocaleString('en-US')}-card desk, medians): usable within 1,000 ms: ${verdict(big.usable <= 1000)} ` +
          `(${ms(big.usable)}); an action within 150 ms of its key: ${verdict(big.action <= 150)} (${ms(big.action)}); a filed ` +
          `card within 2,000 ms: ${verdict(big.arrival <= 2000)} (${ms(big.arrival)}).`,
        '',
        'The first screen\u2019s script (every `.js` the desk had loaded when usable): as the service sends it, and what gzip ' +
          '(level 9) and Brotli (quality 11) make of it.',
        '',
        '| script | bytes | sent (transfer size) | gzip | Brotli |',
        '|---|---:|---:|---:|---:|',
        ...sizes.map((s) => `| ${s.name} | ${kb(s.raw)} | ${kb(s.sent)} | ${kb(s.gzip)} | ${kb(s.brotli)} |`),
        `| all | ${kb(total('raw'))} | ${kb(total('sent'))} | ${kb(total('gzip'))} | ${kb(total('brotli'))} |`,
        '',
        `Target: at most 200 KB of compressed script: ${verdict(total('sent') <= 200 * 1024)} as sent ` +
          `(${kb(total('sent'))}); gzip ${kb(total('gzip'))}, Brotli ${kb(total('brotli'))}.`,
      ].join('\n'),
    };
  } finally {
    await browser?.close();
    redis.disconnect();
    await db.destroy();
    await stop(api);
    await dropPrefix(config.redisUrl, PREFIX);
  }
}
