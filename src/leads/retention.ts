import { deleteBatch, type Prune } from '../db.js';

/**
 * What retention removes of the leads area's history (docs/decisions/retention.md): finished imports' rows (done or
 * failed), by when they finished, through `lead_imports_finished_at`. An unfinished import is the import sweep's
 * (it fails one an hour after its upload, which drops its file). Leads and contacts are never removed.
 */
export const leadsPrunes = {
  leadImports: ((q, before, limit) =>
    deleteBatch(q, 'lead_imports', `state IN ('done', 'failed') AND finished_at < ?`, [before], limit)) as Prune,
};
