import { createAccount } from '../src/accounts/accounts.service.js';
import { addToBlocklist } from '../src/blocklist/blocklist.service.js';
import { createDb, ensureDatabase, migrate } from '../src/db.js';
import { parseMapping } from '../src/leads/import-csv.js';
import { importContacts } from '../src/leads/import.service.js';
import { upsertLead } from '../src/leads/leads.service.js';
import { configWith } from '../test/helpers/config.js';
import { fmt, median } from './lib.js';
import type { BenchContext, Section } from './run.js';

const ROWS = Number(process.env.BENCH_IMPORT_ROWS ?? 100_000);
/** Leads made one call at a time for the baseline, extrapolated to ROWS. */
const SINGLES = Number(process.env.BENCH_IMPORT_SINGLES ?? 2_000);

/** A CSV of `rows` contacts over rows/4 companies; one row in 100 bad, one in 100 repeats an earlier one, one in 200 blocked. */
export function importCsv(rows: number, tag: string): string {
  const lines = ['Email,Name,Company,Website,Industry,Persona,Tags'];
  for (let i = 0; i < rows; i++) {
    const company = `c${Math.floor(i / 4)}-${tag}`;
    if (i % 100 === 37) lines.push(`not-an-address-${i},Bad ${i},${company},,,,`);
    else if (i % 100 === 71) lines.push(`p${i - 1}@${`c${Math.floor((i - 1) / 4)}-${tag}`}.example,Repeat ${i},x,,,,`);
    else if (i % 200 === 13) lines.push(`p${i}@blocked-${tag}.example,Blocked ${i},Blocked,,,,`);
    else lines.push(`p${i}@${company}.example,Person ${i},Company ${Math.floor(i / 4)},${company}.example,Software,Founder,seed;q${i % 4}`);
  }
  return `${lines.join('\n')}\n`;
}

const MAP = parseMapping('email=Email,name=Name,company=Company,domain=Website,vertical=Industry,archetype=Persona,tags=Tags');

/**
 * Imports a 100,000-row CSV (with bad, repeated and blocked rows) into a fresh account through the import
 * service (one transaction, batched), three times on fresh accounts; beside it, in the same run, the same
 * contacts recorded one `upsertLead` call at a time (the path every other lead takes), extrapolated to the
 * file's size.
 */
export async function leadsImport(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  await ensureDatabase(config.databaseUrl);
  const db = createDb(config.databaseUrl, 4);
  await migrate(db);
  try {
    const imports: number[] = [];
    let last = { imported: 0, duplicates: 0, rejected: 0 };
    for (let round = 0; round < ctx.rounds; round++) {
      const tag = `r${round}${Date.now().toString(36)}`;
      const account = await createAccount(db, `Import bench ${round}`);
      await addToBlocklist(db, account.id, [`blocked-${tag}.example`], 'customer', null);
      const csv = Buffer.from(importCsv(ROWS, tag));
      const started = performance.now();
      const summary = await importContacts(db, account.id, csv, MAP);
      imports.push(performance.now() - started);
      last = { imported: summary.imported, duplicates: summary.duplicates, rejected: summary.rejected.length };
    }
    const singles: number[] = [];
    for (let round = 0; round < ctx.rounds; round++) {
      const account = await createAccount(db, `Single bench ${round}`);
      const started = performance.now();
      for (let i = 0; i < SINGLES; i++) {
        await upsertLead(db, account.id, {
          domain: `c${Math.floor(i / 4)}-s${round}.example`,
          companyName: `Company ${i}`,
          contacts: [{ name: `Person ${i}`, email: `p${i}@c${Math.floor(i / 4)}-s${round}.example` }],
        });
      }
      singles.push(((performance.now() - started) / SINGLES) * ROWS);
    }
    const imported = median(imports);
    const single = median(singles);
    return {
      title: `Importing a ${ROWS.toLocaleString('en-US')}-row CSV of contacts`,
      body: [
        `A ${ROWS.toLocaleString('en-US')}-row file (1 row in 100 not an address, 1 in 100 a repeat, 1 in 200 on the block list) ` +
          `imported into a fresh account by the import service (streaming parse, checks, batches of 1,000 in one transaction); ` +
          `${ctx.rounds} imports, median. Beside it in the same run: ${SINGLES.toLocaleString('en-US')} contacts recorded one ` +
          '`upsertLead` call at a time, extrapolated to the file’s size.',
        '',
        '| path | ms for the file (median) | rows a second |',
        '|---|---:|---:|',
        `| import service, one transaction, batches of 1,000 | ${fmt(imported)} | ${fmt((ROWS / imported) * 1000)} |`,
        `| one upsertLead per row (extrapolated) | ${fmt(single)} | ${fmt((ROWS / single) * 1000)} |`,
        '',
        `Last import: ${last.imported.toLocaleString('en-US')} imported, ${last.duplicates.toLocaleString('en-US')} duplicates, ` +
          `${last.rejected.toLocaleString('en-US')} rejected. The import takes ${fmt(imported / single, 3)}× the time of single ` +
          `creates (${fmt(single / imported, 1)}× faster).`,
      ].join('\n'),
    };
  } finally {
    await db.destroy();
  }
}
