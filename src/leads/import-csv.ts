import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { normaliseBlockValue } from '../blocklist/normalise.js';
import { BadRequest } from '../errors.js';
import { LeadLabels } from './lead-labels.js';
import { leadDomain } from './leads.service.js';

/**
 * Reading a CSV of contacts (docs/dashboard.md, "Import"): the column mapping, the streaming parse and
 * each row's checks. A row is read with the leads area's own rules (the domain rule of `upsertLead`, the
 * block list's email rule, the label schemas of `PATCH /leads/{id}`), never a second copy of them.
 */

export const IMPORT_FIELDS = ['email', 'name', 'company', 'domain', 'vertical', 'archetype', 'tags'] as const;
export type ImportField = (typeof IMPORT_FIELDS)[number];
/** Which header column each field is read from; a field left out is not imported. */
export type ColumnMapping = Partial<Record<ImportField, string>>;

/** The largest record the parser takes (a longer one is a rejected row, not a stalled import). */
const MAX_RECORD_BYTES = 64 * 1024;
/** Tags in one cell are separated by `;` (a comma would need quoting in the file). */
const TAG_SEPARATOR = ';';

/**
 * Reads a mapping written `email=Email,name=Full name` (the CLI's `--map`, the route's `map` query) or given as an
 * object. Unknown fields and empty column names are refused with a sentence naming them.
 */
export function parseMapping(input: string | Record<string, unknown> | undefined, flag = 'map'): ColumnMapping | null {
  if (input === undefined || input === '') return null;
  const pairs: [string, unknown][] =
    typeof input === 'string'
      ? input.split(',').map((part) => {
          const at = part.indexOf('=');
          if (at <= 0) throw new BadRequest(`${flag} must be field=Column pairs separated by commas, such as email=Email,name=Name`);
          return [part.slice(0, at).trim(), part.slice(at + 1).trim()];
        })
      : Object.entries(input);
  const mapping: ColumnMapping = {};
  for (const [field, column] of pairs) {
    if (!(IMPORT_FIELDS as readonly string[]).includes(field))
      throw new BadRequest(`${flag} has unknown field ${field}; the fields are ${IMPORT_FIELDS.join(', ')}`);
    if (typeof column !== 'string' || !column.trim()) throw new BadRequest(`${flag} must name a column for ${field}`);
    mapping[field as ImportField] = column.trim();
  }
  return mapping;
}

/** A row ready to import. */
export interface ImportRow {
  line: number;
  email: string | null;
  domain: string;
  name: string | null;
  company: string | null;
  vertical: string | null;
  archetype: string | null;
  tags: string[];
}

export interface RowProblem {
  line: number;
  reason: string;
}

export type ReadRow = { ok: true; row: ImportRow } | { ok: false; problem: RowProblem };

/** Column index of each mapped field, from the header; with no mapping, header names equal to field names (any case). */
function columnIndexes(header: string[], mapping: ColumnMapping | null): Partial<Record<ImportField, number>> {
  const names = header.map((h) => h.trim());
  const indexes: Partial<Record<ImportField, number>> = {};
  if (mapping) {
    for (const [field, column] of Object.entries(mapping) as [ImportField, string][]) {
      const i = names.indexOf(column);
      if (i === -1)
        throw new BadRequest(
          `map names column "${column}" for ${field}, which the file's header does not have (it has ${names.join(', ')})`,
        );
      indexes[field] = i;
    }
  } else {
    for (const field of IMPORT_FIELDS) {
      const i = names.findIndex((n) => n.toLowerCase() === field);
      if (i !== -1) indexes[field] = i;
    }
  }
  if (indexes.email === undefined && indexes.domain === undefined)
    throw new BadRequest('map must name a column for email or for domain (for example email=Email)');
  return indexes;
}

const cell = (record: string[], i: number | undefined): string | null => {
  if (i === undefined) return null;
  const v = record[i]?.trim();
  return v ? v : null;
};

function readRecord(record: string[], line: number, width: number, at: Partial<Record<ImportField, number>>): ReadRow {
  const refuse = (reason: string): ReadRow => ({ ok: false, problem: { line, reason } });
  if (record.length !== width) return refuse(`the row has ${record.length} columns; the header has ${width}`);
  const rawEmail = cell(record, at.email);
  let email: string | null = null;
  if (rawEmail !== null) {
    const read = normaliseBlockValue(rawEmail);
    if (read?.kind !== 'email') return refuse(`email ${JSON.stringify(rawEmail)} is not an email address`);
    email = read.value;
  }
  const rawDomain = cell(record, at.domain);
  let domain: string | null = null;
  if (rawDomain !== null) {
    domain = leadDomain(rawDomain);
    if (!domain) return refuse(`domain ${JSON.stringify(rawDomain)} is not a domain name`);
  } else if (email) domain = email.slice(email.lastIndexOf('@') + 1);
  if (!domain) return refuse(at.email !== undefined ? 'email is required (or a domain)' : 'domain is required');
  const rawTags = cell(record, at.tags);
  const labels = LeadLabels.safeParse({
    vertical: cell(record, at.vertical) ?? undefined,
    archetype: cell(record, at.archetype) ?? undefined,
    tags: rawTags === null ? undefined : rawTags.split(TAG_SEPARATOR),
  });
  if (!labels.success) {
    const issue = labels.error.issues[0]!;
    const field = issue.path.filter((p) => typeof p === 'string').join('.');
    return refuse(`${field} ${issue.message}`);
  }
  return {
    ok: true,
    row: {
      line,
      email,
      domain,
      name: cell(record, at.name),
      company: cell(record, at.company),
      vertical: labels.data.vertical ?? null,
      archetype: labels.data.archetype ?? null,
      tags: labels.data.tags ?? [],
    },
  };
}

export type CsvSource = Readable | Buffer | string;

const toStream = (source: CsvSource): Readable => (source instanceof Readable ? source : Readable.from([source]));

/**
 * Streams a CSV's rows, each read and checked: the header line first (it names the columns), then one
 * ReadRow per record, numbered by the file's line the record ends on. A record the parser cannot read (an
 * unclosed quote, one past 64 KiB) is a refused row; an error of the source itself (an upload cut short)
 * is thrown. A mapping naming a column the header lacks is a BadRequest before any row.
 */
export async function* readCsv(source: CsvSource, mapping: ColumnMapping | null): AsyncGenerator<ReadRow> {
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
    info: true,
  });
  const skipped: RowProblem[] = [];
  parser.on('skip', (err: Error & { lines?: number }) => {
    skipped.push({ line: err.lines ?? 0, reason: `the row could not be read as CSV (${err.message.replace(/^Invalid [^:]*: /, '')})` });
  });
  const input = toStream(source);
  // A source that fails (an upload cut short) fails the parse: the import sees the error, not a short file.
  input.on('error', (err) => parser.destroy(err));
  input.pipe(parser);
  let header: string[] | null = null;
  let at: Partial<Record<ImportField, number>> = {};
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      while (skipped.length) yield { ok: false, problem: skipped.shift()! };
      if (!header) {
        header = record;
        at = columnIndexes(header, mapping);
        continue;
      }
      yield readRecord(record, info.lines, header.length, at);
    }
    while (skipped.length) yield { ok: false, problem: skipped.shift()! };
    if (!header) throw new BadRequest('the file is empty; its first line must be a header naming the columns');
  } finally {
    input.unpipe(parser);
    if (!input.destroyed) input.destroy();
  }
}

/** How many records follow the header (a first pass over a stored file, for the import's progress). */
export async function countRecords(source: Buffer): Promise<number> {
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    skip_records_with_error: true,
    max_record_size: MAX_RECORD_BYTES,
  });
  let count = 0;
  parser.on('skip', () => count++);
  Readable.from([source]).pipe(parser);
  for await (const _ of parser) count++;
  return Math.max(0, count - 1);
}
