/**
 * Worker throughput of the `webhook-events` pool: N logged, accepted deliveries (spread over
 * several accounts) pushed through a real worker process (`bin/start.ts workers --pools webhook-events`)
 * until every one is handed to a turn (its event recorded for the agent, the account's drain job
 * queued), beside the ceiling measured in the same run: a bare BullMQ worker doing one Postgres UPDATE
 * per job at the same concurrency. Jobs are queued while the queue is paused; the clock runs from
 * resume to the last delivery linked to its turn. No agent-turns worker runs, so the turns wait.
 */
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { webhookEvent } from '../src/jobs/webhook-events.js';
import { createHook } from '../src/webhooks/webhooks.service.js';
import { fmt, median, stop } from './lib.js';
import type { BenchContext, Section } from './run.js';
import { addPaused, count, spawnQuiet, startCeiling, timed, until } from './worker-lib.js';

const PREFIX = '{benchwhw}';
const ACCOUNTS = 10;
const PAYLOAD = JSON.stringify({ event: 'signup', email: 'ada@example.com', plan: 'trial', company: { domain: 'example.com', seats: 12 } });

export async function webhookWorker(ctx: BenchContext): Promise<Section> {
  const n = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 20_000);
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX });
  const concurrency = config.webhooks.eventsConcurrency;
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 4);
  await migrate(db);
  const redis = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
  const hooks: { hookId: string; accountId: string }[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const account = await createAccount(db, `Bench webhook worker ${i}`);
    const { hookId } = await createHook({ config, db, redis }, 'http://127.0.0.1', { accountId: account.id, label: 'bench' });
    hooks.push({ hookId, accountId: account.id });
  }
  const accountIds = hooks.map((h) => h.accountId);
  const events = new Queue('webhook-events', { connection: redis, prefix: PREFIX });
  const turns = new Queue('agent-turns', { connection: redis, prefix: PREFIX });
  for (const q of [events, turns]) await q.obliterate({ force: true });
  const ceiling = await startCeiling(db, redis, config, PREFIX, concurrency);

  const servers = [
    // BENCH_CPU_PROF=dir: the worker process writes a CPU profile there (node --cpu-prof).
    spawnQuiet(
      [
        ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : []),
        'bin/start.ts',
        'workers',
        '--pools',
        'webhook-events',
      ],
      { DATABASE_URL: config.databaseUrl, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'warn' },
    ),
  ];
  const rates = { ceiling: [] as number[], events: [] as number[] };
  let checked = '';
  try {
    await until('the webhook-events worker', async () => (await events.getWorkersCount()) > 0, 60_000, 200);
    for (let round = 0; round < ctx.rounds; round++) {
      // The ceiling: N rows, one UPDATE per job.
      rates.ceiling.push(await ceiling.round(n, `r${round}`));

      // The pool: N accepted deliveries, round robin over the accounts, each with its job.
      await db('webhook_deliveries').delete();
      await db('agent_turns').whereIn('account_id', accountIds).delete();
      await turns.obliterate({ force: true });
      const at = Date.now();
      const rows = Array.from({ length: n }, (_, i) => {
        const h = hooks[i % hooks.length]!;
        return {
          id: `dlv_bench${round}x${i}`,
          account_id: h.accountId,
          hook_id: h.hookId,
          at: at + i,
          outcome: 'Accepted',
          bytes: PAYLOAD.length,
          body: PAYLOAD,
        };
      });
      for (let i = 0; i < rows.length; i += 1000) await db('webhook_deliveries').insert(rows.slice(i, i + 1000));
      await addPaused(
        events,
        rows.map((r) => ({
          name: webhookEvent.name,
          data: { deliveryId: r.id },
          opts: { ...webhookEvent.options, jobId: webhookEvent.key({ deliveryId: r.id }) },
        })),
      );
      rates.events.push(
        await timed(events, n, () =>
          count(db, "SELECT count(*) AS n FROM webhook_deliveries WHERE turn_id IS NOT NULL OR outcome <> 'Accepted'"),
        ),
      );

      // Every delivery handed exactly once, and every account's turns queued for a drain.
      const [handed, turnRows, distinctTurns, failed] = await Promise.all([
        count(db, 'SELECT count(*) AS n FROM webhook_deliveries WHERE turn_id IS NOT NULL'),
        count(db, `SELECT count(*) AS n FROM agent_turns WHERE account_id IN (${accountIds.map((a) => `'${a}'`).join(',')})`),
        count(db, 'SELECT count(DISTINCT turn_id) AS n FROM webhook_deliveries'),
        count(db, "SELECT count(*) AS n FROM webhook_deliveries WHERE outcome <> 'Accepted'"),
      ]);
      const drains = await turns.getJobs(['waiting', 'delayed', 'prioritized'], 0, -1);
      const drained = new Set(drains.map((j) => (j.data as { accountId: string }).accountId));
      checked =
        `${fmt(handed)} of ${fmt(n)} handed, ${fmt(turnRows)} turns recorded (${fmt(distinctTurns)} distinct links), ` +
        `${failed} not accepted; ${fmt(drains.length)} drain jobs queued covering ${drained.size} of ${ACCOUNTS} accounts`;
      if (handed !== n || turnRows !== n || distinctTurns !== n || drained.size !== ACCOUNTS)
        throw new Error(`webhook worker bench: ${checked}`);
    }
  } finally {
    await Promise.all(servers.map(stop));
    await ceiling.close();
    for (const q of [events, turns]) await q.obliterate({ force: true }).catch(() => {});
    await Promise.all([events.close(), turns.close()]);
    redis.disconnect();
    await db('webhook_deliveries')
      .delete()
      .catch(() => {});
    await db.destroy();
  }
  const ceil = median(rates.ceiling);
  const ev = median(rates.events);
  return {
    title: 'Webhook events through the worker pool',
    body: [
      `${fmt(n)} accepted deliveries over ${ACCOUNTS} accounts, queued while the queue is paused; the clock runs from resume ` +
        `until the last one is linked to its turn.`,
      `One \`webhook-events\` worker process (concurrency ${concurrency}, Postgres pool ${config.databasePoolMax}); ` +
        `${ctx.rounds} interleaved rounds, medians. No agent-turns worker runs, so the turns wait.`,
      '',
      '| target | events/s | of the ceiling | rounds |',
      '|---|---:|---:|---|',
      `| ceiling: bare BullMQ worker, one Postgres UPDATE per job (concurrency ${concurrency}) | ${fmt(ceil)} | 100.0% | ` +
        `${rates.ceiling.map((r) => fmt(r)).join(', ')} |`,
      `| webhook-events: delivery → event turn recorded, drain queued | ${fmt(ev)} | ${fmt((ev / ceil) * 100, 1)}% | ` +
        `${rates.events.map((r) => fmt(r)).join(', ')} |`,
      '',
      `Checked after each round: ${checked}.`,
      `Target: ≥ 1,500 events/s. Measured: ${fmt(ev)} events/s.`,
    ].join('\n'),
  };
}
