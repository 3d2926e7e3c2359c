/**
 * Received mail parsed and applied per second: `processInbound` end to end against real
 * Postgres (read the stored row, parse, classify, match by token / thread headers / a report's original,
 * lock, settle and apply the outcome: lead, block list, sequences, channel events, the wake turn and its
 * enqueue) over a mix of the test fixtures (test/fixtures/mail), beside a bare mailparser `simpleParser`
 * loop over the same bytes, alternating, in the same run. Both run `INBOUND_MAIL_CONCURRENCY` in flight.
 * Run alone with `npx tsx bench/inbound-parse.bench.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { createAccount } from '../src/accounts/accounts.service.js';
import { configWith } from '../test/helpers/config.js';
import { createDeps } from '../src/deps.js';
import { ensureDatabase, migrate } from '../src/db.js';
import { newId } from '../src/ids.js';
import { inboundRepository } from '../src/inbound/inbound.repository.js';
import { parseMail } from '../src/inbound/parse.js';
import { processInbound } from '../src/inbound/process.service.js';
import { upsertLead } from '../src/leads/leads.service.js';
import { createLogger } from '../src/logger.js';
import { threadsRepository } from '../src/mail/threads.repository.js';
import { fmt, median, pool, ROOT } from './lib.js';
import type { BenchContext, Section } from './run.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/mail');
const PREFIX = '{benchinbound}';

/** This process's CPU time (user + system, µs) per message since `from`. */
function cpuPer(from: NodeJS.CpuUsage, n: number): number {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / n;
}

/** The fixture with its thread filled in and a Message-ID of its own (else a repeat is a `duplicate`). */
function fill(template: string, token: string, messageId: string, i: number): Buffer {
  const filled = template.replaceAll('__TOKEN__', token).replaceAll('<__MSGID__>', messageId);
  const end = filled.indexOf('\r\n\r\n');
  const head = filled.slice(0, end);
  const own = `<bench-${i}-${token}@acme.test>`;
  const newHead = /^Message-I[Dd]:/im.test(head)
    ? head.replace(/^Message-I[Dd]:.*(?:\r\n[ \t].*)*/im, `Message-ID: ${own}`)
    : `${head}\r\nMessage-ID: ${own}`;
  return Buffer.from(newHead + filled.slice(end), 'latin1');
}

export async function inboundParse(ctx: BenchContext): Promise<Section> {
  const n = Number(process.env.BENCH_INBOUND_MESSAGES ?? Math.max(300, ctx.seconds * 120));
  const rounds = Math.max(3, ctx.rounds);
  const config = configWith({ DATABASE_URL: ctx.databaseUrl, QUEUE_PREFIX: PREFIX, LOG_LEVEL: 'silent' });
  const width = config.inbound.concurrency;
  await ensureDatabase(config.databaseUrl);
  const deps = createDeps(config, createLogger('silent'));
  await deps.ready();
  await migrate(deps.db);
  const templates = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.eml'))
    .sort()
    .map((f) => ({ name: f, text: readFileSync(path.join(FIXTURES, f), 'latin1') }));

  /** N stored messages of a fresh account, each answering its own thread (and lead), the fixtures in turn. */
  async function stored(round: number): Promise<{ ids: string[]; raws: Buffer[] }> {
    const account = await createAccount(deps.db, `Inbound bench ${round}`);
    const ids: string[] = [];
    const raws: Buffer[] = [];
    for (let i = 0; i < n; i++) {
      const lead = await upsertLead(deps.db, account.id, { domain: `r${round}-${i}.acme.test`, status: 'contacted' });
      const sendId = newId('send');
      const token = newId('rt').slice(3).toLowerCase();
      const messageId = `<mail-${sendId}@localhost>`;
      await threadsRepository(deps.db).insert({
        sendId,
        accountId: account.id,
        cardId: newId('card'),
        leadId: lead.id,
        sequenceId: null,
        step: 0,
        replyToken: token,
        messageId,
        to: `jane${i}@acme.test`,
        createdAt: Date.now(),
      });
      const raw = fill(templates[i % templates.length]!.text, token, messageId, i);
      const id = newId('im');
      await inboundRepository(deps.db).insert({
        id,
        accountId: account.id,
        via: 'smtp',
        mailFrom: null,
        rcptTo: [],
        raw,
        receivedAt: Date.now(),
      });
      ids.push(id);
      raws.push(raw);
    }
    return { ids, raws };
  }

  const rates = { bare: [] as number[], parse: [] as number[], applied: [] as number[] };
  const cpuUs = { bare: [] as number[], parse: [] as number[], applied: [] as number[] };
  let checked = '';
  try {
    // Round 0 warms the JIT and the connection pool for both paths and is not counted.
    for (let r = 0; r <= rounds; r++) {
      const { ids, raws } = await stored(r);
      let cpu = process.cpuUsage();
      rates.bare.push(
        await pool(raws, width, async (raw) => {
          await simpleParser(raw);
        }),
      );
      cpuUs.bare.push(cpuPer(cpu, n));
      cpu = process.cpuUsage();
      rates.parse.push(
        await pool(raws, width, async (raw) => {
          await parseMail(raw);
        }),
      );
      cpuUs.parse.push(cpuPer(cpu, n));
      cpu = process.cpuUsage();
      rates.applied.push(await pool(ids, width, (id) => processInbound(deps, id)));
      cpuUs.applied.push(cpuPer(cpu, n));
      const rows: { status: string; n: string }[] = await deps
        .db('inbound_messages')
        .whereIn('id', ids)
        .groupBy('status')
        .select('status', deps.db.raw('count(*) AS n'));
      const by = Object.fromEntries(rows.map((x) => [x.status, Number(x.n)]));
      checked = Object.entries(by)
        .map(([s, c]) => `${fmt(c)} ${s}`)
        .join(', ');
      if (by.received) throw new Error(`inbound bench: ${checked}`);
      if (r === 0) for (const list of [...Object.values(rates), ...Object.values(cpuUs)]) list.length = 0;
    }
  } finally {
    await deps.queues
      .get('agent-turns')
      ?.obliterate({ force: true })
      .catch(() => {});
    await deps.close();
  }
  const bare = median(rates.bare);
  const applied = median(rates.applied);
  const mean = templates.reduce((a, t) => a + t.text.length, 0) / templates.length;
  return {
    title: 'Received mail parsed and applied (processInbound beside bare mailparser)',
    body: [
      `${fmt(n)} stored messages a round, the ${templates.length} fixtures of test/fixtures/mail in turn ` +
        `(mean ${fmt(mean / 1024, 1)} KiB; ` +
        'replies from five clients, Postfix/Exchange/Gmail/qmail bounces, auto-replies, an ARF report, unsubscribes, one malformed),',
      `each answering its own thread and lead; ${width} in flight (INBOUND_MAIL_CONCURRENCY), in one process. ` +
        `${rounds} alternating rounds after a warm-up round, medians.`,
      '',
      '| Path | messages/s | this process, CPU µs/message | rounds (messages/s) |',
      '|---|---:|---:|---|',
      `| bare mailparser \`simpleParser\` over the same bytes | ${fmt(bare)} | ${fmt(median(cpuUs.bare))} | ` +
        `${rates.bare.map((x) => fmt(x)).join(', ')} |`,
      `| parseMail alone (the service's parse: report parts kept, other attachments drained) | ${fmt(median(rates.parse))} | ` +
        `${fmt(median(cpuUs.parse))} | ${rates.parse.map((x) => fmt(x)).join(', ')} |`,
      `| processInbound: read row, parse, classify, match, settle + apply in one transaction, wake | ${fmt(applied)} | ` +
        `${fmt(median(cpuUs.applied))} | ${rates.applied.map((x) => fmt(x)).join(', ')} |`,
      `| ratio (target ≥ 0.5) | ${fmt(applied / bare, 2)} | | |`,
      '',
      `Checked after each round: no message left \`received\` (last round: ${checked}).`,
      ...(applied / bare >= 0.5
        ? []
        : [
            '',
            "The target is not met. Parsing is not the cost (the service's parse is faster than the bare loop: it skips " +
              'HTML rendering and drains attachments it does not need). Each message makes about ten Postgres round trips ' +
              '(the row, the thread lookup, then BEGIN, the conditional settle, the lead, one statement per channel event, ' +
              'the sequence stop, the wake turn, COMMIT) and a human reply one BullMQ enqueue; a CPU profile of this process ' +
              "puts about a quarter of its time in the kernel sending those queries over loopback TCP (writev under pg's " +
              'submit) and most of the rest in knex and pg. Getting to 0.5 needs fewer round trips per message (applying ' +
              'several messages in one transaction with multi-row statements), not a faster parse.',
          ]),
    ].join('\n'),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { urlFor, freshDatabase } = await import('./urls.js');
  await freshDatabase('growth_agent_bench_inbound');
  const section = await inboundParse({ databaseUrl: urlFor('growth_agent_bench_inbound'), seconds: 3, rounds: 3 });
  process.stdout.write(`## ${section.title}\n\n${section.body}\n`);
}
