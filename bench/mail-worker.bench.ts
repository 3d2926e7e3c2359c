/**
 * Worker throughput of background mail sends: N trusted mail drafts whose auto-resolve
 * deadline has come, each with its `card.auto-resolve` job, pushed through a real worker process
 * (`bin/start.ts workers --pools card-timers`, the pool that sends in the background) to the local
 * development transport (`MAIL_TRANSPORT=local`: one .eml file a message), beside the ceiling measured
 * in the same run: a bare BullMQ worker doing one Postgres UPDATE per job at the same concurrency.
 * Jobs are queued while the queue is paused; the clock runs from resume to the last card `sent`.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate, type Db } from '../src/db.js';
import { newId } from '../src/ids.js';
import { cardAutoResolve } from '../src/jobs/card-timers.js';
import { cardsRepository } from '../src/review/cards/cards.repository.js';
import { registerCardWrites } from '../src/queue-version/card-writes.js';
import { keyspace } from '../src/redis.js';
import { fmt, median, stop } from './lib.js';
import type { BenchContext, Section } from './run.js';
import { addPaused, count, spawnQuiet, startCeiling, timed, until } from './worker-lib.js';

const PREFIX = '{benchmail}';
const ACCOUNTS = 10;

export async function mailWorker(ctx: BenchContext): Promise<Section> {
  const n = Number(process.env.BENCH_MAIL_SENDS ?? 2_000);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gas-bench-mail-'));
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  const concurrency = config.review.timersConcurrency;
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 4);
  await migrate(db);
  const accounts: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) accounts.push((await createAccount(db, `Bench mail worker ${i}`)).id);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  // The cards this process makes bump their accounts' queue versions, as every card write does.
  registerCardWrites(db, { redis, keyspace: keyspace(PREFIX) });
  const timers = new Queue('card-timers', { connection: redis, prefix: PREFIX });
  await timers.obliterate({ force: true });
  const ceiling = await startCeiling(db, redis, config, PREFIX, concurrency);
  const worker = spawnQuiet(['bin/start.ts', 'workers', '--pools', 'card-timers'], {
    DATABASE_URL: config.databaseUrl,
    QUEUE_PREFIX: PREFIX,
    LOG_LEVEL: 'warn',
    MAIL_TRANSPORT: 'local',
    MAIL_LOCAL_DIR: dir,
    // The card sweep would find the due cards itself; the benchmark measures the jobs.
    CARD_SWEEP_MS: '3600000',
  });
  const rates = { ceiling: [] as number[], sends: [] as number[] };
  let checked = '';
  try {
    await until('the card-timers worker', async () => (await timers.getWorkersCount()) > 0, 60_000, 200);
    for (let round = 0; round < ctx.rounds; round++) {
      rates.ceiling.push(await ceiling.round(n, `r${round}`));

      await db('shipments').delete();
      await db('channel_events').delete();
      await db('channel_event_refs').delete();
      await db('review_cards').delete();
      await rm(dir, { recursive: true, force: true });
      const at = Date.now() - 1_000;
      const cards = await insertDueDrafts(db, accounts, n, at);
      await addPaused(
        timers,
        cards.map((c) => ({
          name: cardAutoResolve.name,
          data: { accountId: c.accountId, cardId: c.id, at },
          opts: { ...cardAutoResolve.options, jobId: `bench-auto-${c.id}` },
        })),
      );
      rates.sends.push(await timed(timers, n, () => count(db, "SELECT count(*) AS n FROM review_cards WHERE status = 'sent'")));

      const [sent, fences, files] = await Promise.all([
        count(db, "SELECT count(*) AS n FROM review_cards WHERE status = 'sent'"),
        count(db, "SELECT count(*) AS n FROM shipments WHERE status = 'sent'"),
        readdir(dir).then(
          (f) => f.filter((x) => x.endsWith('.eml')).length,
          () => 0,
        ),
      ]);
      checked = `${fmt(sent)} of ${fmt(n)} cards sent, ${fmt(fences)} settled fences, ${fmt(files)} messages written`;
      if (sent !== n || fences !== n || files !== n) throw new Error(`mail worker bench: ${checked}`);
    }
  } finally {
    await stop(worker);
    await ceiling.close();
    await timers.obliterate({ force: true }).catch(() => {});
    await timers.close();
    redis.disconnect();
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  }
  const ceil = median(rates.ceiling);
  const sends = median(rates.sends);
  return {
    title: 'Mail sends through the worker pool',
    body: [
      `${fmt(n)} trusted mail drafts over ${ACCOUNTS} accounts, their auto-resolve jobs queued while the queue is paused; ` +
        `the clock runs from resume until the last card is \`sent\`.`,
      `One \`card-timers\` worker process (concurrency ${concurrency}) sending to the local development transport (an .eml ` +
        `file a message): each send`,
      'reads the card, checks the block list, claims it and writes the fence in one transaction, writes the message, then ' +
        'settles the fence and the',
      `card and records the channel event. ${ctx.rounds} interleaved rounds, medians.`,
      '',
      '| target | jobs/s | of the ceiling | rounds |',
      '|---|---:|---:|---|',
      `| ceiling: bare BullMQ worker, one Postgres UPDATE per job (concurrency ${concurrency}) | ${fmt(ceil)} | 100.0% | ` +
        `${rates.ceiling.map((r) => fmt(r)).join(', ')} |`,
      `| card-timers: fenced send to the development transport | ${fmt(sends)} | ${fmt((sends / ceil) * 100, 1)}% | ` +
        `${rates.sends.map((r) => fmt(r)).join(', ')} |`,
      '',
      `Checked after each round: ${checked}.`,
    ].join('\n'),
  };
}

/** N pending mail drafts whose trust-ladder deadline is `at`, round robin over the accounts. */
async function insertDueDrafts(db: Db, accounts: string[], n: number, at: number): Promise<{ id: string; accountId: string }[]> {
  const repo = cardsRepository(db);
  const out: { id: string; accountId: string }[] = [];
  for (let i = 0; i < n; i++) {
    const accountId = accounts[i % accounts.length]!;
    const card = await repo.insert({
      id: newId('card'),
      accountId,
      kind: 'approval',
      sourceType: 'mail_draft',
      title: `Intro ${i}`,
      payload: { work: 'email', to: `lead${i}@example.com`, draft: { subject: `Quick idea ${i}`, body: 'Hi,\n\nA short note.' } },
      actions: [],
      primaryLabel: '',
      ladderChecked: true,
      autoResolveAt: at,
      detail: { autoResolve: { by: 'trust_ladder', at } },
      kindOfWork: 'email',
    });
    out.push({ id: card.id, accountId });
  }
  return out;
}
