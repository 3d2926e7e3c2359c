/**
 * The inbound SMTP listener refusing a stranger at RCPT beside accepting our own mail, in the same run, in
 * alternating rounds: sessions over real loopback sockets, each of 10 transactions. Accepting: MAIL FROM,
 * RCPT to a live reply token (one indexed lookup), DATA of a 1 KiB reply, stored in Postgres before the
 * 250, its parse job queued in Redis. Refusing: MAIL FROM, RCPT to a reply+ address of the right shape
 * naming no mail of ours (the same lookup) answered 550, RSET. Then the writes: pg_stat_database of the
 * bench database before and after a batch of refused sessions (their listener's connections closed, so
 * its backends have flushed their counters) and after a batch of accepted ones.
 */
import { connect } from 'node:net';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { startInboundSmtp } from '../src/inbound/smtp-listener.js';
import { createLogger } from '../src/logger.js';
import { newReplyToken } from '../src/mail/outbound.js';
import { fmt, median } from './lib.js';
import type { BenchContext, Section } from './run.js';

const PREFIX = '{benchsmtp}';
const PER_SESSION = 10;
const WIDTH = 16;
const MESSAGE = Buffer.from(
  [
    'From: Jane <jane@acme.test>',
    'To: someone@localhost',
    'Subject: Re: hello',
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    ...Array.from({ length: 12 }, () => 'Thanks, that sounds good. Let us talk on Thursday about the plan and the numbers.'),
    '',
  ].join('\r\n'),
);

/** One session of PER_SESSION transactions to `to()`; resolves with the reply codes of each RCPT. */
function session(port: number, to: () => string, accept: boolean): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = '';
    const codes: number[] = [];
    const queue: ((line: string) => void)[] = [];
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => {
      buffered += d.toString('latin1');
      for (;;) {
        const m = /^(\d{3}) .*\r\n/m.exec(buffered);
        if (!m) break;
        buffered = buffered.slice(m.index + m[0].length);
        queue.shift()?.(m[0]);
      }
    });
    const reply = () => new Promise<string>((r) => queue.push(r));
    const say = (line: string) => {
      const p = reply();
      socket.write(`${line}\r\n`);
      return p;
    };
    (async () => {
      await reply();
      await say('EHLO bench.test');
      for (let i = 0; i < PER_SESSION; i++) {
        await say('MAIL FROM:<jane@acme.test>');
        const rcpt = Number((await say(`RCPT TO:<${to()}>`)).slice(0, 3));
        codes.push(rcpt);
        if (accept && rcpt === 250) {
          await say('DATA');
          const done = reply();
          socket.write(MESSAGE);
          socket.write('\r\n.\r\n');
          const answer = await done;
          if (!answer.startsWith('250')) throw new Error(`bench smtp: message answered ${answer.trim()}`);
        } else await say('RSET');
      }
      await say('QUIT');
      socket.destroy();
      resolve(codes);
    })().catch(reject);
  });
}

/** Transactions per second of `sessions` sessions, WIDTH at once; throws on any unexpected RCPT answer. */
async function run(port: number, sessions: number, to: () => string, accept: boolean): Promise<number> {
  const want = accept ? 250 : 550;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WIDTH }, async () => {
      while (next++ < sessions) {
        const codes = await session(port, to, accept);
        if (codes.some((c) => c !== want)) throw new Error(`bench smtp: RCPT answered ${codes.join(',')}, wanted ${want}`);
      }
    }),
  );
  return (sessions * PER_SESSION) / ((performance.now() - started) / 1000);
}

interface Writes {
  commits: number;
  inserted: number;
  updated: number;
  deleted: number;
  rows: number;
}

async function writes(deps: Deps): Promise<Writes> {
  const { rows } = await deps.db.raw<{ rows: Record<string, string>[] }>(
    `SELECT xact_commit, tup_inserted, tup_updated, tup_deleted, (SELECT count(*) FROM inbound_messages) AS n
       FROM pg_stat_database WHERE datname = current_database()`,
  );
  const r = rows[0]!;
  return {
    commits: Number(r.xact_commit),
    inserted: Number(r.tup_inserted),
    updated: Number(r.tup_updated),
    deleted: Number(r.tup_deleted),
    rows: Number(r.n),
  };
}

export async function smtpRcpt(ctx: BenchContext): Promise<Section> {
  const sessions = Number(process.env.BENCH_SMTP_SESSIONS ?? Math.max(100, ctx.seconds * 40));
  const rounds = Math.max(3, ctx.rounds);
  const config = configWith({
    DATABASE_URL: ctx.databaseUrl,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'silent',
    INBOUND_SMTP_SESSIONS_PER_IP: '1000',
    INBOUND_SMTP_MESSAGES_PER_MINUTE: '100000000',
    INBOUND_SMTP_BYTES_PER_HOUR: '1000000000000',
  });
  await ensureDatabase(config.databaseUrl);
  const start = async () => {
    const deps = createDeps(config, createLogger('silent'));
    await deps.ready();
    const smtp = await startInboundSmtp(deps, { port: 0, host: '127.0.0.1' });
    const stop = async () => {
      await smtp.close();
      await deps.close();
    };
    return { deps, smtp, stop };
  };
  const seed = createDeps(config, createLogger('silent'));
  await seed.ready();
  await migrate(seed.db);
  const account = await createAccount(seed.db, 'Bench smtp');
  const tokens = Array.from({ length: 1_000 }, () => newReplyToken());
  await seed.db('mail_threads').insert(
    tokens.map((token, i) => ({
      send_id: `send_smtp${i}`,
      account_id: account.id,
      card_id: `card_smtp${i}`,
      step: 0,
      reply_token: token,
      message_id: `<mail-smtp${i}@localhost>`,
      to_address: `jane${i}@acme.test`,
      created_at: Date.now(),
    })),
  );
  let k = 0;
  const live = () => `reply+${tokens[k++ % tokens.length]}@localhost`;
  const stranger = () => `reply+${newReplyToken()}@localhost`;

  const rates = { accept: [] as number[], refuse: [] as number[] };
  const l = await start();
  try {
    // Round 0 warms both paths and is not counted.
    for (let r = 0; r <= rounds; r++) {
      const a = await run(l.smtp.port, sessions, live, true);
      const b = await run(l.smtp.port, sessions, stranger, false);
      if (r > 0) {
        rates.accept.push(a);
        rates.refuse.push(b);
      }
    }
  } finally {
    await l.stop();
  }

  // Writes: each batch on a listener of its own whose connections close before the counters are read.
  const batch = sessions;
  const measure = async (to: () => string, accept: boolean) => {
    const before = await writes(seed);
    const b = await start();
    try {
      await run(b.smtp.port, batch, to, accept);
    } finally {
      await b.stop();
    }
    // A backend's counters reach pg_stat_database when it exits; wait until this batch's lookups show.
    const end = Date.now() + 20_000;
    let after = await writes(seed);
    while (after.commits - before.commits < batch * PER_SESSION && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 100));
      after = await writes(seed);
    }
    return {
      commits: after.commits - before.commits,
      inserted: after.inserted - before.inserted,
      updated: after.updated - before.updated,
      deleted: after.deleted - before.deleted,
      rows: after.rows - before.rows,
    };
  };
  const refused = await measure(stranger, false);
  const accepted = await measure(live, true);
  await seed.queues
    .get('inbound-mail')
    ?.obliterate({ force: true })
    .catch(() => {});
  await seed.close();
  if (refused.inserted || refused.updated || refused.deleted || refused.rows) {
    throw new Error(`bench smtp: refused recipients wrote to Postgres: ${JSON.stringify(refused)}`);
  }

  const acc = median(rates.accept);
  const ref = median(rates.refuse);
  const n = batch * PER_SESSION;
  return {
    title: 'Inbound SMTP: refusing a stranger at RCPT beside accepting a reply',
    body: [
      `One listener in this process (INBOUND_SMTP_* per-client limits raised out of the way), ${WIDTH} sessions at once over loopback, ` +
        `${fmt(sessions)} sessions a round of ${PER_SESSION} transactions each; ` +
        `${rounds} alternating rounds after a warm-up round, medians.`,
      'Accepting: RCPT to a live reply token (one indexed lookup, which also reads the account’s stored bytes), DATA of a ' +
        `${fmt(MESSAGE.length)}-byte reply, stored before the 250, parse job queued. Refusing: RCPT to a reply+ address of the ` +
        'right shape naming no mail of ours (the same lookup), `550 5.1.1`, RSET.',
      '',
      '| Path | transactions/s | rounds |',
      '|---|---:|---|',
      `| accept (RCPT 250, DATA, stored) | ${fmt(acc)} | ${rates.accept.map((x) => fmt(x)).join(', ')} |`,
      `| refuse at RCPT (550 5.1.1) | ${fmt(ref)} | ${rates.refuse.map((x) => fmt(x)).join(', ')} |`,
      '',
      `Refusing runs ${fmt(ref / acc, 1)}× the transactions of accepting. What reached Postgres (pg_stat_database of the bench database, ` +
        `${fmt(n)} transactions each, the listener's connections closed before reading):`,
      '',
      '| Batch | commits (the lookups, and this reader’s own) | rows inserted | updated | deleted | inbound_messages rows added |',
      '|---|---:|---:|---:|---:|---:|',
      `| ${fmt(n)} refused recipients | ${fmt(refused.commits)} | ${fmt(refused.inserted)} | ${fmt(refused.updated)} | ` +
        `${fmt(refused.deleted)} | ${fmt(refused.rows)} |`,
      `| ${fmt(n)} accepted messages | ${fmt(accepted.commits)} | ${fmt(accepted.inserted)} | ${fmt(accepted.updated)} | ` +
        `${fmt(accepted.deleted)} | ${fmt(accepted.rows)} |`,
      '',
      'A refused recipient costs one read-only statement (its commit is the lookup’s own) and writes nothing; an accepted ' +
        'message writes its row (and nothing else at intake: the account’s byte count is kept when processing places it).',
    ].join('\n'),
  };
}
