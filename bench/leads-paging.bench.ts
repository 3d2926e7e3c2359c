import pg from 'pg';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { upsertLead } from '../src/leads/leads.service.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { fmt, freePort, median, startServer, stop, NO_RATE_LIMITS } from './lib.js';
import type { BenchContext, Section } from './run.js';

const LEADS = Number(process.env.BENCH_LEADS ?? 10_000);

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? NaN;

/**
 * Walks every page of a 10,000-lead account through `GET /api/v1/leads?limit=100` (auth, limiter,
 * signed cursor, list form with columns), beside the bare keyset SELECT of the same pages in the same run.
 */
export async function leadsPaging(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 8);
  await migrate(db);
  const account = await createAccount(db, 'Paging bench');
  const { token } = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['leads:read'] });
  for (let i = 0; i < LEADS; i += 200) {
    await Promise.all(
      Array.from({ length: Math.min(200, LEADS - i) }, (_, j) =>
        upsertLead(db, account.id, {
          domain: `company${i + j}.example`,
          companyName: `Company ${i + j}`,
          status: (i + j) % 7 === 0 ? 'replied' : 'researched',
          fields: { industry: 'software', headcount: String(10 + ((i + j) % 500)) },
          contacts: [{ name: `Person ${i + j}`, email: `p${i + j}@company${i + j}.example` }],
        }),
      ),
    );
  }
  await db.destroy();

  const port = await freePort();
  const api = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: config.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...NO_RATE_LIMITS,
    },
    `http://127.0.0.1:${port}/healthz`,
  );
  const client = new pg.Client({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    const walkApi = async () => {
      const pages: number[] = [];
      let cursor: string | null = null;
      let seen = 0;
      const started = performance.now();
      do {
        const t = performance.now();
        const url = new URL(`http://127.0.0.1:${port}/api/v1/leads`);
        url.searchParams.set('limit', '100');
        if (cursor) url.searchParams.set('cursor', cursor);
        const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
        const body = (await res.json()) as { leads: unknown[]; nextCursor: string | null };
        pages.push(performance.now() - t);
        seen += body.leads.length;
        cursor = body.nextCursor;
      } while (cursor);
      return { total: performance.now() - started, pages, seen };
    };
    const walkSql = async () => {
      const pages: number[] = [];
      let after: [number, number] | null = null;
      let seen = 0;
      const started = performance.now();
      for (;;) {
        const t = performance.now();
        const result: pg.QueryResult<{ created_at: string; seq: string }> = await client.query(
          after
            ? 'SELECT * FROM leads WHERE account_id = $1 AND (created_at, seq) < ($2, $3) ORDER BY created_at DESC, seq DESC LIMIT 100'
            : 'SELECT * FROM leads WHERE account_id = $1 ORDER BY created_at DESC, seq DESC LIMIT 100',
          after ? [account.id, after[0], after[1]] : [account.id],
        );
        const rows = result.rows;
        pages.push(performance.now() - t);
        seen += rows.length;
        if (rows.length < 100) break;
        const last: { created_at: string; seq: string } = rows.at(-1)!;
        after = [Number(last.created_at), Number(last.seq)];
      }
      return { total: performance.now() - started, pages, seen };
    };
    await walkApi();
    await walkSql();
    const apiRuns = [];
    const sqlRuns = [];
    for (let i = 0; i < ctx.rounds; i++) {
      apiRuns.push(await walkApi());
      sqlRuns.push(await walkSql());
    }
    const row = (name: string, runs: Array<{ total: number; pages: number[]; seen: number }>) => {
      const pages = runs.flatMap((r) => r.pages);
      return (
        `| ${name} | ${runs[0]!.seen} | ${runs[0]!.pages.length} | ${fmt(median(runs.map((r) => r.total)))} | ` +
        `${fmt(pct(pages, 50), 2)} | ${fmt(pct(pages, 99), 2)} |`
      );
    };
    const ratio = median(apiRuns.map((r) => r.total)) / median(sqlRuns.map((r) => r.total));
    return {
      title: `Paging a ${LEADS.toLocaleString('en-US')}-lead account`,
      body: [
        `One client follows \`nextCursor\` from the first page to the last with \`limit=100\`; ${ctx.rounds} walks each, medians.`,
        '',
        '| walk | leads seen | pages | total ms | page p50 ms | page p99 ms |',
        '|---|---:|---:|---:|---:|---:|',
        row('GET /api/v1/leads (auth, limiter, signed cursor, list form)', apiRuns),
        row('bare keyset SELECT of the same pages (pg, no HTTP)', sqlRuns),
        '',
        `The API walk takes ${fmt(ratio, 1)}× the bare SELECT walk.`,
      ].join('\n'),
    };
  } finally {
    await client.end();
    await stop(api);
  }
}
