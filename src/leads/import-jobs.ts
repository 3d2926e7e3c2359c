import type { Deps } from '../deps.js';
import { AppError, NotFound } from '../errors.js';
import { newId } from '../ids.js';
import { enqueue } from '../jobs/registry.js';
import { leadsImport } from '../jobs/maintenance.js';
import { type ColumnMapping, countRecords, readCsv } from './import-csv.js';
import { importContacts } from './import.service.js';
import { type ImportRecord, importsRepository } from './imports.repository.js';

/**
 * An uploaded file imported as a job (docs/dashboard.md, "Import"): the upload is stored whole with its
 * mapping (a cut upload never reaches here: nothing is stored), the job is queued after the commit, and the
 * job reads the stored file through the import service, writing its progress as it goes and its result in
 * the import's own transaction.
 */

/** Reads the header against the mapping now, so a mapping naming a missing column is the uploader's 400, not a failed job. */
async function checkHeader(csv: Buffer, mapping: ColumnMapping | null): Promise<void> {
  for await (const _ of readCsv(csv, mapping)) break;
}

export async function startImport(
  deps: Pick<Deps, 'db' | 'queues'>,
  accountId: string,
  csv: Buffer,
  mapping: ColumnMapping | null,
  createdBy: string | null,
): Promise<ImportRecord> {
  await checkHeader(csv, mapping);
  const id = newId('imp');
  const repo = importsRepository(deps.db);
  await repo.insert({ id, accountId, mapping, csv, createdBy, at: Date.now() });
  // Commit, then enqueue: a lost enqueue leaves the row queued (docs/dashboard.md, "Import", for its repair).
  await enqueue(deps.queues, leadsImport, { accountId, importId: id });
  return (await repo.find(accountId, id))!;
}

export async function getImport(deps: Pick<Deps, 'db'>, accountId: string, id: string): Promise<ImportRecord> {
  const found = await importsRepository(deps.db).find(accountId, id);
  if (!found) throw new NotFound();
  return found;
}

/** The job: skips an import already finished; a refusal of the file itself (never a bad row) fails the import for good. */
export async function runImport(deps: Pick<Deps, 'db'>, accountId: string, importId: string) {
  const repo = importsRepository(deps.db);
  const work = await repo.work(accountId, importId);
  if (!work) return { skipped: true };
  const total = await countRecords(work.csv);
  await repo.progress(accountId, importId, { state: 'running', total, processed: 0 }, Date.now());
  try {
    const summary = await importContacts(deps.db, accountId, work.csv, work.mapping, {
      onProgress: (s) =>
        repo.progress(
          accountId,
          importId,
          { processed: s.processed, imported: s.imported, duplicates: s.duplicateRows.length },
          Date.now(),
        ),
      // Given up by the sweep meanwhile: the rows roll back with the transaction, as the failed state says.
      beforeCommit: async (trx, s) => {
        if (!(await importsRepository(trx).finish(accountId, importId, { state: 'done', ...s, error: null }, Date.now())))
          throw new Error(`import ${importId} was finished while it ran; its rows are not kept`);
      },
    });
    return { imported: summary.imported, duplicates: summary.duplicates, rejected: summary.rejected.length };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    const error = err.error;
    await repo.finish(
      accountId,
      importId,
      { state: 'failed', processed: 0, imported: 0, duplicates: 0, rejected: [], duplicateRows: [], error },
      Date.now(),
    );
    return { failed: error };
  }
}

/** An import whose row has not moved for this long has lost its job (a running one writes after every batch). */
const STALE_MS = 2 * 60_000;
/** An import not finished this long after its upload is given up: nothing of it was written. */
const GIVE_UP_MS = 60 * 60_000;
const SWEEP_LIMIT = 100;

/**
 * The repair of docs/rules.md ("Commit, then enqueue, then repair"): queues again the job of each import left
 * queued or running with no progress (the job key makes a repeat of a live job a no-op), and fails the imports
 * still unfinished an hour after their upload, so no import waits forever.
 */
export async function sweepImports(deps: Pick<Deps, 'db' | 'queues'>, now = Date.now()) {
  const repo = importsRepository(deps.db);
  let requeued = 0;
  let failed = 0;
  for (const s of await repo.stale(now - STALE_MS, SWEEP_LIMIT)) {
    if (now - s.createdAt > GIVE_UP_MS) {
      const error = 'the import did not finish within an hour; nothing of it was imported: upload the file again';
      await repo.finish(
        s.accountId,
        s.id,
        { state: 'failed', processed: 0, imported: 0, duplicates: 0, rejected: [], duplicateRows: [], error },
        now,
      );
      failed++;
    } else {
      await enqueue(deps.queues, leadsImport, { accountId: s.accountId, importId: s.id });
      requeued++;
    }
  }
  return { requeued, failed };
}
