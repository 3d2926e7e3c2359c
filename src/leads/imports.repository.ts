import type { Queryable } from '../db.js';
import type { ColumnMapping, RowProblem } from './import-csv.js';

export type ImportState = 'queued' | 'running' | 'done' | 'failed';

export interface ImportRecord {
  id: string;
  state: ImportState;
  /** Rows read after the header so far; `total` once the job has counted them (null before). */
  processed: number;
  total: number | null;
  imported: number;
  duplicates: number;
  rejected: RowProblem[];
  duplicateRows: RowProblem[];
  error: string | null;
  createdAt: number;
  finishedAt: number | null;
}

interface ImportRow {
  id: string;
  account_id: string;
  state: ImportState;
  mapping: ColumnMapping | null;
  csv: Buffer | null;
  total: number | null;
  processed: number;
  imported: number;
  duplicates: number;
  rejected: RowProblem[];
  duplicate_rows: RowProblem[];
  error: string | null;
  created_at: string | number;
  finished_at: string | number | null;
}

const toRecord = (r: ImportRow): ImportRecord => ({
  id: r.id,
  state: r.state,
  processed: r.processed,
  total: r.total,
  imported: r.imported,
  duplicates: r.duplicates,
  rejected: r.rejected,
  duplicateRows: r.duplicate_rows,
  error: r.error,
  createdAt: Number(r.created_at),
  finishedAt: r.finished_at === null ? null : Number(r.finished_at),
});

/** The `lead_imports` table: one row per uploaded file, its progress and its result. */
export function importsRepository(q: Queryable) {
  return {
    async insert(row: { id: string; accountId: string; mapping: ColumnMapping | null; csv: Buffer; createdBy: string | null; at: number }) {
      await q('lead_imports').insert({
        id: row.id,
        account_id: row.accountId,
        state: 'queued',
        mapping: JSON.stringify(row.mapping),
        csv: row.csv,
        created_by: row.createdBy,
        created_at: row.at,
        updated_at: row.at,
      });
    },

    async find(accountId: string, id: string): Promise<ImportRecord | null> {
      const row: ImportRow | undefined = await q('lead_imports')
        .where({ account_id: accountId, id })
        .first(
          'id',
          'account_id',
          'state',
          'total',
          'processed',
          'imported',
          'duplicates',
          'rejected',
          'duplicate_rows',
          'error',
          'created_at',
          'finished_at',
        );
      return row ? toRecord(row) : null;
    },

    /** The file and mapping of an import still to run (queued, or running when its worker died), else null. */
    async work(accountId: string, id: string): Promise<{ csv: Buffer; mapping: ColumnMapping | null } | null> {
      const row: Pick<ImportRow, 'csv' | 'mapping'> | undefined = await q('lead_imports')
        .where({ account_id: accountId, id })
        .whereIn('state', ['queued', 'running'])
        .first('csv', 'mapping');
      return row?.csv ? { csv: row.csv, mapping: row.mapping } : null;
    },

    /** Imports not finished whose row has not moved since `before` (oldest first, at most `limit`). */
    async stale(before: number, limit: number): Promise<Array<{ accountId: string; id: string; createdAt: number }>> {
      const rows: { account_id: string; id: string; created_at: string }[] = await q('lead_imports')
        .whereIn('state', ['queued', 'running'])
        .andWhere('updated_at', '<', before)
        .orderBy('updated_at')
        .limit(limit)
        .select('account_id', 'id', 'created_at');
      return rows.map((r) => ({ accountId: r.account_id, id: r.id, createdAt: Number(r.created_at) }));
    },

    async progress(
      accountId: string,
      id: string,
      patch: Partial<{ state: ImportState; total: number; processed: number; imported: number; duplicates: number }>,
      at: number,
    ): Promise<void> {
      await q('lead_imports')
        .where({ account_id: accountId, id })
        .whereIn('state', ['queued', 'running'])
        .update({ ...patch, updated_at: at });
    },

    /**
     * The final state of an import still unfinished (false: it was finished already, by its job or given up by the
     * sweep); the file is dropped (what was read of it is in the leads, the result in this row).
     */
    async finish(
      accountId: string,
      id: string,
      result: {
        state: 'done' | 'failed';
        processed: number;
        imported: number;
        duplicates: number;
        rejected: RowProblem[];
        duplicateRows: RowProblem[];
        error: string | null;
      },
      at: number,
    ): Promise<boolean> {
      const changed = await q('lead_imports')
        .where({ account_id: accountId, id })
        .whereIn('state', ['queued', 'running'])
        .update({
          state: result.state,
          processed: result.processed,
          imported: result.imported,
          duplicates: result.duplicates,
          rejected: JSON.stringify(result.rejected),
          duplicate_rows: JSON.stringify(result.duplicateRows),
          error: result.error,
          csv: null,
          updated_at: at,
          finished_at: at,
        });
      return changed > 0;
    },
  };
}
