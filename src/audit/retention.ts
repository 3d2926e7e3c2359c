import { deleteBatch, type Prune } from '../db.js';

/** Audit entries older than the audit retention go (docs/decisions/retention.md). */
export const pruneAudit: Prune = (q, before, limit) => deleteBatch(q, 'audit_log', 'at < ?', [before], limit);
