import type { Queryable } from '../db.js';

/**
 * Attributed conversion value per (channel, currency) of the account's aggregated conversions that happened in the
 * spans (`(occurred_at >= lo AND occurred_at < hi) OR …`), split at `since` (`current`: at or after it), each with
 * how many conversions it sums (`/results`, which adds the rollups' part).
 */
export async function conversionValuesIn(
  q: Queryable,
  accountId: string,
  since: number,
  spans: readonly { lo: number; hi: number }[],
): Promise<{ channel: string; currency: string; current: boolean; n: number; total: number }[]> {
  if (!spans.length) return [];
  const inSpans = `(${spans.map(() => 'occurred_at >= ? AND occurred_at < ?').join(' OR ')})`;
  const { rows } = (await q.raw(
    `SELECT channel, currency, occurred_at >= ? AS current, count(*)::int AS n, sum(value)::text AS total FROM conversions
      WHERE account_id = ? AND aggregated_at IS NOT NULL AND value IS NOT NULL AND currency IS NOT NULL AND ${inSpans}
      GROUP BY 1, 2, 3`,
    [since, accountId, ...spans.flatMap((s) => [s.lo, s.hi])],
  )) as { rows: { channel: string; currency: string; current: boolean; n: number; total: string }[] };
  return rows.map((r) => ({ ...r, total: Number(r.total) }));
}
