import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import request from 'supertest';
import { createApp } from '../api/app.js';
import { routes } from '../api/routes/index.js';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { createLogger } from '../src/logger.js';
import { smtpTransport } from '../src/mail/smtp.transport.js';
import { createDeps } from '../src/deps.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { benchCard, fmt, pool, NO_RATE_LIMITS } from './lib.js';
import type { BenchContext, Section } from './run.js';

/**
 * Fenced sends per second: `POST /review/{id}/send` (block-list check, claim + fence in Postgres,
 * SMTP on loopback, settle + channel event) against the bare SMTP transport on the same server.
 * Run alone with `npx tsx bench/mail-send.bench.ts`, or register `'mail-send': mailSend` in bench/run.ts.
 */
export async function mailSend(ctx: BenchContext): Promise<Section> {
  let received = 0;
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, _s, cb) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received++;
        cb();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const port = (smtp.server.address() as AddressInfo).port;
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    MAIL_TRANSPORT: 'smtp',
    SMTP_PORT: String(port),
    LOG_LEVEL: 'silent',
    ...NO_RATE_LIMITS,
  });
  await ensureDatabase(config.databaseUrl);
  const deps = createDeps(config, createLogger('silent'));
  await deps.ready();
  await migrate(deps.db);
  const account = await createAccount(deps.db, 'Mail bench');
  const { token } = await mintToken(deps.db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:write'] });
  const app = createApp(deps, routes);
  const n = Math.max(200, ctx.seconds * 100);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push(
      await benchCard(deps.db, account.id, 'mail_draft', {
        work: 'email',
        to: `p${i}@bench.example`,
        draft: { subject: `bench ${i}`, body: 'Hello from the benchmark.' },
      }),
    );
  }
  const transport = smtpTransport({ host: '127.0.0.1', port, secure: false, auth: null, connectTimeoutMs: 5000, sendTimeoutMs: 15000 });
  const bare = await pool(
    ids.map((_, i) => i),
    10,
    async (i) => {
      await transport.send({ from: config.mail.from, to: `b${i}@bench.example`, subject: 'bare', text: 'x' }, `bare-${i}`);
    },
  );
  const fenced = await pool(ids, 10, async (id) => {
    const res = await request(app).post(`/api/v1/review/${id}/send`).set('Authorization', `Bearer ${token}`).send({});
    if (res.status !== 200) throw new Error(`send answered ${res.status}`);
  });
  await deps.close();
  await new Promise<void>((r) => smtp.close(() => r()));
  return {
    title: 'Mail sends (POST /review/{id}/send over SMTP on loopback)',
    body: [
      `${n} distinct mail cards, 10 in flight, ${received} messages received (expected ${2 * n}).`,
      '',
      '| Path | sends/s |',
      '|---|---|',
      `| bare SMTP transport (one connection per send) | ${fmt(bare)} |`,
      `| fenced API send (auth, limiter, block list, fence, SMTP, settle, channel event) | ${fmt(fenced)} |`,
      `| ratio | ${fmt(fenced / bare, 2)} |`,
    ].join('\n'),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { urlFor } = await import('./urls.js');
  const section = await mailSend({ databaseUrl: urlFor('growth_agent_bench_mail'), seconds: 2, rounds: 1 });
  process.stdout.write(`## ${section.title}\n\n${section.body}\n`);
}
