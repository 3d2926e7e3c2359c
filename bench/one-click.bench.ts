/**
 * One-click unsubscribe: RFC 8058 POSTs to `/u/{token}` on a real API process, beside bare
 * Express answering a form POST with an HTML page of the same size, measured in the same run in
 * alternating rounds. Two service targets: every POST a new token (the thread row locked, the address
 * blocked, the opt-out counted, the lead unsubscribed, its sequences stopped, in one committed
 * transaction), and the same token again and again (a repeat: the same statements, nothing left to change).
 */
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { newReplyToken } from '../src/mail/outbound.js';
import { cpuMultiple, compare, fmt, freePort, pct, ratioTable, startServer, stop, type Load, type Target } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchoneclick}';
const BODY = 'List-Unsubscribe=One-Click';
/** Threads seeded: more than a run's fresh POSTs, so each of them unsubscribes someone new. */
const THREADS = Number(process.env.BENCH_ONE_CLICK_THREADS ?? 60_000);

async function seed(databaseUrl: string): Promise<string[]> {
  const db = createDb(databaseUrl, 2);
  try {
    await migrate(db);
    const account = await createAccount(db, 'Bench one-click');
    const at = Date.now();
    const tokens = Array.from({ length: THREADS }, () => newReplyToken());
    const leads = tokens.map((_, i) => ({
      id: `lead_oc${i}`,
      account_id: account.id,
      domain: `oc${i}.example.com`,
      status: 'contacted',
      created_at: at,
      updated_at: at,
    }));
    const threads = tokens.map((token, i) => ({
      send_id: `send_oc${i}`,
      account_id: account.id,
      card_id: `card_oc${i}`,
      lead_id: `lead_oc${i}`,
      step: 0,
      reply_token: token,
      message_id: `<mail-send_oc${i}@localhost>`,
      to_address: `p${i}@oc${i}.example.com`,
      created_at: at,
    }));
    await db.batchInsert('leads', leads, 2_000);
    await db.batchInsert('mail_threads', threads, 2_000);
    return tokens;
  } finally {
    await db.destroy();
  }
}

export async function oneClick(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  await ensureDatabase(config.databaseUrl);
  const tokens = await seed(config.databaseUrl);
  const repeatToken = tokens.pop()!;
  let next = 0;
  let wrapped = 0;
  const freshPath = () => {
    if (next >= tokens.length) {
      next = 0;
      wrapped++;
    }
    return `/u/${tokens[next++]}`;
  };

  const [pExpress, pApi] = await Promise.all([freePort(), freePort()]);
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: config.databaseUrl,
      QUEUE_PREFIX: PREFIX,
      PORT: String(pApi),
      HOST: '127.0.0.1',
      BASE_URL: `http://127.0.0.1:${pApi}`,
      LOG_LEVEL: 'info',
      // The load generator is one client: its limit out of the way, so every POST does the work measured.
      UNSUBSCRIBE_CLIENT_PER_MINUTE: '100000000',
    },
    `http://127.0.0.1:${pApi}/healthz`,
  );
  // The bare baseline answers a page as long as the service's "You are unsubscribed" page.
  const page = await fetch(`http://127.0.0.1:${pApi}/u/${repeatToken}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: BODY,
  });
  const pageBytes = (await page.arrayBuffer()).byteLength;
  if (page.status !== 200) throw new Error(`one-click POST answered ${page.status}`);
  const bare = await startServer(['bench/servers/html-post.ts', String(pExpress), String(pageBytes)], {}, `http://127.0.0.1:${pExpress}/`);
  try {
    const post = { method: 'POST' as const, body: BODY, headers: { 'content-type': 'application/x-www-form-urlencoded' } };
    const targets: Target[] = [
      { name: `bare Express (form POST → ${pageBytes}-byte HTML)`, url: `http://127.0.0.1:${pExpress}/u/x`, ...post, server: bare },
      {
        name: 'POST /u/{token}, a new token each (unsubscribes)',
        url: `http://127.0.0.1:${pApi}/u/x`,
        ...post,
        nextPath: freshPath,
        server: api,
      },
      { name: 'POST /u/{token}, the same token again (repeat)', url: `http://127.0.0.1:${pApi}/u/${repeatToken}`, ...post, server: api },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const [base, fresh, repeat] = targets.map((t) => results.get(t.name)!) as [Load, Load, Load];
    const times = (r: Load) => cpuMultiple(r, base) ?? 'an unmeasured multiple of';
    const freshPosts = wrapped * tokens.length + next;
    return {
      title: 'One-click unsubscribe',
      body: [
        `10 connections, ${ctx.rounds} alternating rounds of ${ctx.seconds} s each after a 1 s warm-up; medians of the rounds. ` +
          `Body \`${BODY}\``,
        `(application/x-www-form-urlencoded, RFC 8058); ${fmt(THREADS)} threads seeded, each with its lead, so the "new token" ` +
          `target's ${fmt(freshPosts)} POSTs`,
        `${wrapped ? `wrapped round the tokens ${wrapped} time(s): the rest were repeats` : 'each unsubscribed a different address'}. ` +
          'A POST locks the thread row and, in one committed',
        'transaction, puts the address on the block list (`opt_out_reply`), records the `email.opt_out` event (keyed by the send),',
        "marks the lead `unsubscribed` and stops the recipient's sequences; a repeat runs the same statements and changes nothing.",
        '',
        ...ratioTable(targets, results, targets[0]!.name),
        '',
        `New token: ${pct(fresh.rps / base.rps)} of bare Express (${times(fresh)} its CPU per request); repeat: ` +
          `${pct(repeat.rps / base.rps)} (${times(repeat)}).`,
        "The API process's own CPU is the bound (one Node process sharing two cores with the load generator and Postgres):",
        'about nine statements in one transaction, each built by knex, against a bare handler that only parses the form.',
        "The repeat is slower because its 10 connections POST one token and so queue on that thread row's lock, by design",
        '(concurrent POSTs of one link apply one after another). The per-client limit in front of `/u/`',
        '(UNSUBSCRIBE_CLIENT_PER_MINUTE, one Redis call) is raised out of the way here; "Public doors under a flood" has it on.',
      ].join('\n'),
    };
  } finally {
    await Promise.all([bare, api].map(stop));
  }
}
