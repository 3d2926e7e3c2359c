import { deleteBatch, type Prune } from '../db.js';

/** visits is partitioned by month on `at`. */
export const VISITS_PARTITIONS = { table: 'visits', key: 'account_id, id, at' } as const;

/** What retention removes of measurement's history (docs/decisions/retention.md): visits, and conversions once aggregated. */
export const measurementPrunes = {
  visits: ((q, before, limit) => deleteBatch(q, 'visits', 'at < ?', [before], limit, VISITS_PARTITIONS.key)) as Prune,
  conversions: ((q, before, limit) =>
    deleteBatch(q, 'conversions', 'aggregated_at IS NOT NULL AND occurred_at < ? AND received_at < ?', [before, before], limit)) as Prune,
};
