import { spawn } from 'node:child_process';
import request from 'supertest';
import { createApp } from '../api/app.js';
import { routes } from '../api/routes/index.js';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDeps } from '../src/deps.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { createLogger } from '../src/logger.js';
import { smtpTransport } from '../src/mail/smtp.transport.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { INBOUND_DOMAIN, MAILBOX_DOMAIN, startPostfix, type Postfix } from '../test/helpers/postfix.js';
import { freePort } from '../test/helpers/processes.js';
import { benchCard, fmt, median, NO_RATE_LIMITS, pool } from './lib.js';
import type { BenchContext, Section } from './run.js';

/** Messages each path sends per round. */
const PER_ROUND = 200;
/** Messages in flight (SMTP sessions at once) on every path. */
const WIDTH = 10;
/** smtp-source's message body length: about what the service's own mail weighs (headers, a short body). */
const SOURCE_BYTES = 1200;

interface Run {
  /** Messages Postfix answered 250 to, per second (the sender's side). */
  accepted: number;
  /** Messages in the Maildir, per second, counted from the first send until the last is delivered. */
  delivered: number;
}

/** Times `send` (which hands `PER_ROUND` messages for `address` to Postfix), then waits for all of them in the Maildir. */
async function timed(postfix: Postfix, address: string, send: () => Promise<void>): Promise<Run> {
  const before = postfix.count(address);
  const start = performance.now();
  await send();
  const sent = performance.now();
  const end = Date.now() + 120_000;
  while (postfix.count(address) < before + PER_ROUND) {
    if (Date.now() > end) throw new Error(`${address}: ${postfix.count(address) - before} of ${PER_ROUND} delivered`);
    await new Promise((r) => setTimeout(r, 10));
  }
  const done = performance.now();
  return { accepted: (PER_ROUND * 1000) / (sent - start), delivered: (PER_ROUND * 1000) / (done - start) };
}

/** Postfix's own load generator: `PER_ROUND` messages, `WIDTH` sessions, a new connection per message (as the service does). */
function smtpSource(port: number, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ['-s', String(WIDTH), '-m', String(PER_ROUND), '-l', String(SOURCE_BYTES)];
    const child = spawn('/usr/sbin/smtp-source', [...args, '-f', `agent@${INBOUND_DOMAIN}`, '-t', to, `127.0.0.1:${port}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`smtp-source exited ${code}: ${err}`))));
  });
}

/**
 * Mail through a real MTA: Postfix (a private instance, test/helpers/postfix.ts) takes each message and
 * delivers it to a Maildir. Three senders into the same Postfix, interleaved in rounds: Postfix's own
 * `smtp-source`, the service's bare SMTP transport, and the fenced API send (POST /review/{id}/send: auth,
 * block list, fence in Postgres, SMTP, settle, channel event). Run alone with `npx tsx bench/postfix-send.bench.ts`.
 */
export async function postfixSend(ctx: BenchContext): Promise<Section> {
  const boxes = { source: `source@${MAILBOX_DOMAIN}`, transport: `transport@${MAILBOX_DOMAIN}`, api: `api@${MAILBOX_DOMAIN}` };
  const postfix = await startPostfix({ users: Object.values(boxes), inboundPort: await freePort() });
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(postfix.port),
    MAIL_FROM: `Growth Agent <agent@${INBOUND_DOMAIN}>`,
    INBOUND_MAIL_DOMAIN: INBOUND_DOMAIN,
    LOG_LEVEL: 'silent',
    ...NO_RATE_LIMITS,
  });
  await ensureDatabase(config.databaseUrl);
  const deps = createDeps(config, createLogger('silent'));
  try {
    await deps.ready();
    await migrate(deps.db);
    const account = await createAccount(deps.db, 'Postfix bench');
    const { token } = await mintToken(deps.db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:write'] });
    const app = createApp(deps, routes);
    const transport = smtpTransport({
      host: '127.0.0.1',
      port: postfix.port,
      secure: false,
      auth: null,
      connectTimeoutMs: 5000,
      sendTimeoutMs: 15000,
    });
    const cards = async (round: number) => {
      const ids: string[] = [];
      for (let i = 0; i < PER_ROUND; i++) {
        ids.push(
          await benchCard(deps.db, account.id, 'mail_draft', {
            work: 'email',
            to: boxes.api,
            draft: { subject: `bench ${round}.${i}`, body: 'Hello from the benchmark.' },
          }),
        );
      }
      return ids;
    };
    const paths = {
      source: () => smtpSource(postfix.port, boxes.source),
      transport: async (round: number) => {
        await pool(
          Array.from({ length: PER_ROUND }, (_, i) => i),
          WIDTH,
          async (i) => {
            const message = {
              from: config.mail.from,
              to: boxes.transport,
              subject: `bare ${round}.${i}`,
              text: 'Hello from the benchmark.',
            };
            await transport.send(message, `bare-${round}-${i}`);
          },
        );
      },
      api: async (_round: number, ids: string[]) => {
        await pool(ids, WIDTH, async (id) => {
          const res = await request(app).post(`/api/v1/review/${id}/send`).set('Authorization', `Bearer ${token}`).send({});
          if (res.status !== 200) throw new Error(`send answered ${res.status}: ${JSON.stringify(res.body)}`);
        });
      },
    };
    const runs: Record<keyof typeof paths, Run[]> = { source: [], transport: [], api: [] };
    // A warm-up round (not counted), then the rounds, each path in turn so drift hits them alike.
    for (let round = 0; round <= ctx.rounds; round++) {
      for (const name of Object.keys(paths) as (keyof typeof paths)[]) {
        const ids = name === 'api' ? await cards(round) : [];
        const run = await timed(postfix, boxes[name], () => paths[name](round, ids));
        if (round > 0) runs[name].push(run);
      }
    }
    await postfix.drained();
    const total = Object.values(boxes).reduce((n, b) => n + postfix.count(b), 0);
    const row = (label: string, rs: Run[]) =>
      `| ${label} | ${fmt(median(rs.map((r) => r.accepted)))} | ${fmt(median(rs.map((r) => r.delivered)))} |`;
    const base = median(runs.source.map((r) => r.delivered));
    return {
      title: 'Sends through Postfix (the SMTP transport beside smtp-source)',
      body: [
        `A private Postfix ${postfix.version} on loopback (chroot off, virtual delivery to Maildir), ${PER_ROUND} messages per path ` +
          `and round, ${WIDTH} SMTP sessions at once, a new connection per message on every path, medians of ${ctx.rounds} rounds ` +
          `after a warm-up; ${fmt(total)} messages delivered in all (expected ${fmt(3 * PER_ROUND * (ctx.rounds + 1))}). "accepted": ` +
          `Postfix answered 250 to the message; "delivered": counted until the last is in the Maildir. smtp-source sends a ` +
          `${SOURCE_BYTES}-byte body, about the size of the service's own mail. Postfix, the senders, Postgres and Redis share ` +
          'the machine.',
        '',
        '| Path | accepted msgs/s | delivered msgs/s |',
        '|---|---|---|',
        row("`smtp-source` (Postfix's own load generator)", runs.source),
        row("the service's SMTP transport (compose + nodemailer)", runs.transport),
        row('fenced API send (auth, limiter, block list, fence, SMTP, settle, channel event)', runs.api),
        '',
        `Delivered, against smtp-source: transport ${fmt(median(runs.transport.map((r) => r.delivered)) / base, 2)}, ` +
          `API send ${fmt(median(runs.api.map((r) => r.delivered)) / base, 2)}. Postfix delivers as fast as it accepts on every ` +
          'path, so it is never what limits a send; the API send pays for its Postgres transactions (fence, settle, channel ' +
          'event), as in "Mail sends" above.',
      ].join('\n'),
    };
  } finally {
    await deps.close();
    await postfix.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { urlFor } = await import('./urls.js');
  const section = await postfixSend({ databaseUrl: urlFor('growth_agent_bench_postfix'), seconds: 2, rounds: 1 });
  process.stdout.write(`## ${section.title}\n\n${section.body}\n`);
}
