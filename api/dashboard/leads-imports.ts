import { z } from 'zod';
import { recordAudit } from '../../src/audit/audit.service.js';
import { UnsupportedMediaType } from '../../src/errors.js';
import { parseMapping } from '../../src/leads/import-csv.js';
import { getImport, startImport } from '../../src/leads/import-jobs.js';
import { previewImport } from '../../src/leads/import.service.js';
import { readRawBody } from '../raw-body.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { IdParams } from '../schemas.js';
import { ImportQuery, ImportReply, PreviewReply } from './leads-imports.schemas.js';

/** The media types a CSV upload may name (browsers send a `.csv` file as any of these). */
const CSV_TYPES = ['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel'];

/**
 * The CSV import of contacts (docs/dashboard.md, "Import"): the file is the raw body (`text/csv`), the mapping
 * is in the query. A preview answers at once; an import is stored whole and runs as a job (202), whose progress
 * `GET …/imports/{id}` reads. A cut upload never reaches the handler's write: nothing is stored.
 */
export const leadImportRoutes: RouteDef[] = [
  defineRoute({
    method: 'post',
    path: '/dashboard/api/leads/imports',
    operationId: 'importLeads',
    summary: 'Upload a CSV of contacts: preview its first rows, or import it as a job',
    auth: 'session',
    scope: 'leads:write',
    bucket: 'writes',
    query: ImportQuery,
    documentedBody: {
      description: 'The CSV file, its first line a header naming the columns',
      schema: z.string(),
      contentType: 'text/csv',
    },
    errors: [413, 415],
    responses: {
      200: { description: 'preview=true: the first rows as they would be imported, each with its problem', schema: PreviewReply },
      202: { description: 'The import, queued; follow it at GET /dashboard/api/leads/imports/{id}', schema: ImportReply },
    },
  }).handle(async ({ query }, ctx) => {
    const type = String(ctx.req.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (!CSV_TYPES.includes(type)) throw new UnsupportedMediaType('body must be a CSV file (Content-Type text/csv)');
    const mapping = parseMapping(query.map);
    const { config, db } = ctx.deps;
    const max = config.leadImports.maxBytes;
    const csv = await readRawBody(ctx.req, ctx.res, max, `body must be at most ${max} bytes`);
    const accountId = ctx.principal.accountId;
    if (query.preview === 'true') {
      const { rows } = await previewImport(db, accountId, csv, mapping, query.limit ?? config.leadImports.previewRows);
      return { status: 200, body: { rows } };
    }
    const record = await startImport(ctx.deps, accountId, csv, mapping, ctx.session?.person.id ?? null);
    await recordAudit(db, ctx.actor, record.id, 202);
    return { status: 202, body: { import: record } };
  }),

  defineRoute({
    method: 'get',
    path: '/dashboard/api/leads/imports/{id}',
    operationId: 'getLeadImport',
    summary: "An import's progress, then its result: every rejected and duplicate row with its line and reason",
    auth: 'session',
    scope: 'leads:read',
    bucket: 'reads',
    params: IdParams,
    responses: { 200: { description: 'The import', schema: ImportReply } },
  }).handle(async ({ params }, ctx) => ({ body: { import: await getImport(ctx.deps, ctx.principal.accountId, params.id) } })),
];
