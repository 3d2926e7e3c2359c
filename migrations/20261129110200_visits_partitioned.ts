import type { Knex } from 'knex';

/**
 * `visits` partitioned by month on `at` (docs/decisions/retention.md, "Partitioning by time"): retention drops a
 * month whole once all of it is past VISIT_RETENTION_DAYS, instead of deleting its rows. The primary key becomes
 * (account_id, id, at): a partitioned table's keys hold its partition key, and account_id leads as the account key
 * rule asks. Nothing inserts visits ON CONFLICT; ids are random, so uniqueness of `id` alone is not lost in practice.
 * The rows are copied under the table's lock (writers wait for the copy), the old table dropped and the new one renamed.
 */
/** Month partitions `visits_pYYYY_MM` (UTC, epoch ms bounds) from the month holding `from` to the one holding `to`. */
function months(from: number, to: number): { name: string; start: number; end: number }[] {
  const out = [];
  const f = new Date(from);
  for (let m = f.getUTCMonth(); Date.UTC(f.getUTCFullYear(), m, 1) <= to; m++) {
    const start = Date.UTC(f.getUTCFullYear(), m, 1);
    const d = new Date(start);
    out.push({
      name: `visits_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`,
      start,
      end: Date.UTC(f.getUTCFullYear(), m + 1, 1),
    });
  }
  return out;
}

const INDEXES = [
  'CREATE INDEX visits_account_id_at_index ON visits (account_id, at)',
  'CREATE INDEX visits_bot_at ON visits (at) WHERE bot',
  'CREATE INDEX visits_at ON visits (at)',
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE visits IN ACCESS EXCLUSIVE MODE');
  await knex.raw('CREATE TABLE visits_partitioned (LIKE visits INCLUDING DEFAULTS) PARTITION BY RANGE (at)');
  const { rows } = (await knex.raw('SELECT min(at)::float8 AS lo FROM visits')) as { rows: { lo: number | null }[] };
  const now = Date.now();
  const until = new Date(now);
  const last = Date.UTC(until.getUTCFullYear(), until.getUTCMonth() + 2, 1);
  // Months back to the oldest visit, at most 13 (older rows, if any, land in the default partition).
  const from = Math.max(Math.min(rows[0]!.lo ?? now, now), now - 400 * 86_400_000);
  for (const p of months(from, last)) {
    await knex.raw(`CREATE TABLE ${p.name} PARTITION OF visits_partitioned FOR VALUES FROM (${p.start}) TO (${p.end})`);
  }
  await knex.raw('CREATE TABLE visits_pdefault PARTITION OF visits_partitioned DEFAULT');
  await knex.raw('INSERT INTO visits_partitioned SELECT * FROM visits');
  await knex.raw('DROP TABLE visits');
  await knex.raw('ALTER TABLE visits_partitioned RENAME TO visits');
  await knex.raw('ALTER TABLE visits ADD CONSTRAINT visits_pkey PRIMARY KEY (account_id, id, at)');
  await knex.raw(
    'ALTER TABLE visits ADD CONSTRAINT visits_account_id_foreign FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE',
  );
  for (const sql of INDEXES) await knex.raw(sql);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE visits IN ACCESS EXCLUSIVE MODE');
  await knex.raw('CREATE TABLE visits_plain (LIKE visits INCLUDING DEFAULTS)');
  await knex.raw('INSERT INTO visits_plain SELECT * FROM visits');
  await knex.raw('DROP TABLE visits');
  await knex.raw('ALTER TABLE visits_plain RENAME TO visits');
  await knex.raw('ALTER TABLE visits ADD CONSTRAINT visits_pkey PRIMARY KEY (id)');
  await knex.raw(
    'ALTER TABLE visits ADD CONSTRAINT visits_account_id_foreign FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE',
  );
  for (const sql of INDEXES) await knex.raw(sql);
}
