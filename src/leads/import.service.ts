import type { Knex } from 'knex';
import { blockedAmong } from '../blocklist/blocklist.service.js';
import type { Db, Queryable } from '../db.js';
import { newId } from '../ids.js';
import { type ColumnMapping, type CsvSource, type ImportRow, type RowProblem, readCsv } from './import-csv.js';
import { leadsRepository } from './leads.repository.js';

/**
 * The CSV import of contacts (docs/dashboard.md, "Import"): every row read and checked as it streams in,
 * the good ones written in batches of IMPORT_BATCH rows, all in one transaction: a file cut short, a
 * failure half-way or a crash leaves nothing of the import behind. The operator's verb, the dashboard's
 * preview and the import job all run this code.
 */

/** Rows per batch: one block-list query, one contacts query and two multi-row inserts each (at most ~9 parameters a row). */
export const IMPORT_BATCH = 1_000;

/** The source every imported lead records (`leads.source`). */
export const IMPORT_SOURCE = 'customer_import';

export interface ImportSummary {
  imported: number;
  duplicates: number;
  rejected: RowProblem[];
  /** Each duplicate row and why: already a contact (or, domain only, a lead) of the account, or a repeat of an earlier line. */
  duplicateRows: RowProblem[];
  /** Rows read after the header. */
  processed: number;
}

type Verdict = { kind: 'new'; row: ImportRow } | { kind: 'rejected' | 'duplicate'; problem: RowProblem; row: ImportRow | null };

/**
 * What would happen to each row of a batch, read-only: refused (blocked), a duplicate (a repeat in the file,
 * already a contact, or a domain-only row for an existing lead), or new. `seen` carries the file's keys across batches.
 */
async function judge(q: Queryable, accountId: string, rows: ImportRow[], seen: Map<string, number>): Promise<Verdict[]> {
  const blocked = await blockedAmong(
    q,
    accountId,
    rows.map((r) => r.email ?? r.domain),
  );
  const repo = leadsRepository(q);
  const known = await repo.contactEmailsAmong(accountId, [...new Set(rows.flatMap((r) => (r.email ? [r.email] : [])))]);
  const domainOnly = rows.filter((r) => !r.email).map((r) => r.domain);
  const leads = domainOnly.length ? await repo.idsByDomain(accountId, [...new Set(domainOnly)]) : new Map<string, string>();
  return rows.map((row): Verdict => {
    const key = row.email ?? `domain:${row.domain}`;
    const value = row.email ?? row.domain;
    if (blocked.has(value)) return { kind: 'rejected', row, problem: { line: row.line, reason: `${value} is on the block list` } };
    const first = seen.get(key);
    if (first !== undefined) return { kind: 'duplicate', row, problem: { line: row.line, reason: `repeats line ${first}` } };
    seen.set(key, row.line);
    if (row.email && known.has(row.email))
      return { kind: 'duplicate', row, problem: { line: row.line, reason: `${row.email} is already a contact` } };
    if (!row.email && leads.has(row.domain))
      return { kind: 'duplicate', row, problem: { line: row.line, reason: `${row.domain} is already a lead` } };
    return { kind: 'new', row };
  });
}

/**
 * Writes a batch's new rows: a lead for each domain not yet one (source `customer_import`, the labels and
 * company of its first row), and a contact for each row with an address. An existing lead keeps its labels
 * and gains the contacts.
 */
async function writeBatch(trx: Knex.Transaction, accountId: string, rows: ImportRow[], at: number): Promise<void> {
  if (!rows.length) return;
  const repo = leadsRepository(trx);
  const byDomain = new Map<string, ImportRow>();
  for (const r of rows) if (!byDomain.has(r.domain)) byDomain.set(r.domain, r);
  // One order for every writer, so two imports of overlapping domains wait for each other instead of deadlocking.
  const domains = [...byDomain.keys()].sort();
  await repo.insertManyIfAbsent(
    domains.map((domain) => {
      const r = byDomain.get(domain)!;
      return {
        id: newId('lead'),
        account_id: accountId,
        domain,
        company_name: r.company,
        status: 'new',
        reply_kind: null,
        decline_reason: null,
        score: null,
        score_reasons: [],
        vertical: r.vertical,
        archetype: r.archetype,
        tags: r.tags,
        fields: {},
        draft_subject: null,
        draft_body: null,
        created_at: at,
        updated_at: at,
        source: IMPORT_SOURCE,
      };
    }),
  );
  const ids = await repo.idsByDomain(accountId, domains);
  await repo.insertContacts(
    rows
      .filter((r) => r.email)
      .map((r) => ({
        id: newId('lc'),
        lead_id: ids.get(r.domain)!,
        account_id: accountId,
        name: r.name,
        email: r.email,
        title: null,
        profile_url: null,
        created_at: at,
      })),
  );
}

export interface ImportOptions {
  /** Told after each batch what was read and judged so far (outside the import's transaction: nothing is committed yet). */
  onProgress?: (summary: ImportSummary) => Promise<void> | void;
  /** Runs in the import's transaction once every row is in: the job records its result with the rows. */
  beforeCommit?: (trx: Knex.Transaction, summary: ImportSummary) => Promise<void>;
}

/**
 * Imports a CSV of contacts into the account, in one transaction. Throws (and writes nothing) when the
 * source fails, the mapping names a column the header lacks, or the database refuses; bad rows are never
 * a failure: each is listed with its line and reason.
 */
export async function importContacts(
  db: Db,
  accountId: string,
  source: CsvSource,
  mapping: ColumnMapping | null,
  opts: ImportOptions = {},
): Promise<ImportSummary> {
  const summary: ImportSummary = { imported: 0, duplicates: 0, rejected: [], duplicateRows: [], processed: 0 };
  const seen = new Map<string, number>();
  const at = Date.now();
  return db.transaction(async (trx) => {
    let batch: ImportRow[] = [];
    const flush = async () => {
      const verdicts = await judge(trx, accountId, batch, seen);
      const fresh: ImportRow[] = [];
      for (const v of verdicts) {
        if (v.kind === 'new') fresh.push(v.row);
        else if (v.kind === 'duplicate') summary.duplicateRows.push(v.problem);
        else summary.rejected.push(v.problem);
      }
      await writeBatch(trx, accountId, fresh, at);
      summary.imported += fresh.length;
      batch = [];
      await opts.onProgress?.(summary);
    };
    for await (const read of readCsv(source, mapping)) {
      summary.processed++;
      if (!read.ok) summary.rejected.push(read.problem);
      else batch.push(read.row);
      if (batch.length >= IMPORT_BATCH) await flush();
    }
    await flush();
    summary.duplicates = summary.duplicateRows.length;
    summary.rejected.sort((a, b) => a.line - b.line);
    await opts.beforeCommit?.(trx, summary);
    return summary;
  });
}

export interface PreviewRow {
  line: number;
  /** The row as it would be imported, or null when it cannot be read. */
  contact: Omit<ImportRow, 'line'> | null;
  /** Null: it would be imported. */
  problem: { kind: 'rejected' | 'duplicate'; reason: string } | null;
}

/** The first `limit` rows as the import would take them, each with its problem; nothing is written. */
export async function previewImport(
  q: Queryable,
  accountId: string,
  source: CsvSource,
  mapping: ColumnMapping | null,
  limit: number,
): Promise<{ rows: PreviewRow[] }> {
  const out: PreviewRow[] = [];
  const good: ImportRow[] = [];
  for await (const read of readCsv(source, mapping)) {
    if (read.ok) {
      good.push(read.row);
      out.push({ line: read.row.line, contact: withoutLine(read.row), problem: null });
    } else out.push({ line: read.problem.line, contact: null, problem: { kind: 'rejected', reason: read.problem.reason } });
    if (out.length >= limit) break;
  }
  const verdicts = await judge(q, accountId, good, new Map());
  const byLine = new Map(out.map((r) => [r.line, r]));
  for (const v of verdicts) {
    if (v.kind === 'new') continue;
    const row = byLine.get(v.problem.line);
    if (row) row.problem = { kind: v.kind, reason: v.problem.reason };
  }
  return { rows: out };
}

const withoutLine = ({ line: _line, ...rest }: ImportRow): Omit<ImportRow, 'line'> => rest;
