import type { Knex } from 'knex';

/**
 * `channel_events` partitioned by month on `at`, like visits (docs/decisions/retention.md, "Partitioning by time"):
 * retention drops a month whole once all of it is past CHANNEL_EVENT_RETENTION_DAYS and folded into the rollups.
 *
 * The dedupe moves out of the events: a partitioned table's unique keys must hold `at`, and a retried job whose event
 * carries another time would then count twice. `channel_event_refs` keeps one row per (account_id, channel, type,
 * ref_id) as its primary key; writers insert the ref and the event in one statement, the event only when its ref was
 * new. Its `at` is the later of the event's time and when it was recorded: retention trims refs by it, so a ref is
 * remembered at least as long as its event is kept.
 *
 * The events' primary key becomes (account_id, id, at); `id` still comes from its sequence. The plain indexes keep their
 * names: (account_id, at) for `/results`, (at) for retention, (xid) for the rollup pass. The rows are copied under the
 * table's lock (writers wait for the copy), the old table dropped and the new one renamed; on a large deployment run
 * it in a quiet hour.
 */

/** Month partitions `channel_events_pYYYY_MM` (UTC, epoch ms bounds) from the month holding `from` to the one holding `to`. */
function months(from: number, to: number): { name: string; start: number; end: number }[] {
  const out = [];
  const f = new Date(from);
  for (let m = f.getUTCMonth(); Date.UTC(f.getUTCFullYear(), m, 1) <= to; m++) {
    const start = Date.UTC(f.getUTCFullYear(), m, 1);
    const d = new Date(start);
    out.push({
      name: `channel_events_p${d.getUTCFullYear()}_${String(d.getUTCMonth() + 1).padStart(2, '0')}`,
      start,
      end: Date.UTC(f.getUTCFullYear(), m + 1, 1),
    });
  }
  return out;
}

const FOREIGN_KEY = `ALTER TABLE channel_events ADD CONSTRAINT channel_events_account_id_foreign
                       FOREIGN KEY (account_id) REFERENCES accounts (id) ON DELETE CASCADE`;

/**
 * Swaps `channel_events` for `next` (filled from it), with the same plain indexes under the same names (read from the
 * catalog, so an index a later change adds comes along) and the id sequence, which the old `id` column owned.
 */
async function swap(knex: Knex, next: string, primary: string): Promise<void> {
  const { rows: triggers } = (await knex.raw(
    `SELECT tgname FROM pg_trigger WHERE tgrelid = 'channel_events'::regclass AND NOT tgisinternal`,
  )) as { rows: { tgname: string }[] };
  if (triggers.length)
    throw new Error(`channel_events has triggers this migration would lose: ${triggers.map((t) => t.tgname).join(', ')}`);
  const { rows: indexes } = (await knex.raw(
    `SELECT indexdef FROM pg_indexes i JOIN pg_index x ON x.indexrelid = (quote_ident(i.indexname))::regclass
      WHERE i.schemaname = current_schema() AND i.tablename = 'channel_events' AND NOT x.indisunique`,
  )) as { rows: { indexdef: string }[] };
  await knex.raw(`INSERT INTO ${next} SELECT * FROM channel_events`);
  await knex.raw('ALTER SEQUENCE channel_events_id_seq OWNED BY NONE');
  await knex.raw('DROP TABLE channel_events');
  await knex.raw(`ALTER TABLE ${next} RENAME TO channel_events`);
  await knex.raw('ALTER SEQUENCE channel_events_id_seq OWNED BY channel_events.id');
  await knex.raw(`ALTER TABLE channel_events ADD CONSTRAINT channel_events_pkey PRIMARY KEY (${primary})`);
  await knex.raw(FOREIGN_KEY);
  // A partitioned table's read back as `ON ONLY` (its partitions' not built); on the new table it builds them all.
  for (const { indexdef } of indexes) await knex.raw(indexdef.replace(' ON ONLY ', ' ON '));
}

export async function up(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE channel_events IN ACCESS EXCLUSIVE MODE');
  await knex.raw(`
    CREATE TABLE channel_event_refs (
      account_id text NOT NULL CONSTRAINT channel_event_refs_account_id_foreign REFERENCES accounts (id) ON DELETE CASCADE,
      channel text NOT NULL,
      type text NOT NULL,
      ref_id text NOT NULL,
      at bigint NOT NULL,
      CONSTRAINT channel_event_refs_pkey PRIMARY KEY (account_id, channel, type, ref_id)
    )`);
  await knex.raw(`
    INSERT INTO channel_event_refs (account_id, channel, type, ref_id, at)
    SELECT account_id, channel, type, ref_id, greatest(at, recorded_at) FROM channel_events WHERE ref_id IS NOT NULL`);
  await knex.raw('CREATE INDEX channel_event_refs_at ON channel_event_refs (at)');

  await knex.raw('CREATE TABLE channel_events_partitioned (LIKE channel_events INCLUDING DEFAULTS) PARTITION BY RANGE (at)');
  const { rows } = (await knex.raw('SELECT min(at)::float8 AS lo FROM channel_events')) as { rows: { lo: number | null }[] };
  const now = Date.now();
  const until = new Date(now);
  const last = Date.UTC(until.getUTCFullYear(), until.getUTCMonth() + 2, 1);
  // Months back to the oldest event, at most 13 (older rows, if any, land in the default partition).
  const from = Math.max(Math.min(rows[0]!.lo ?? now, now), now - 400 * 86_400_000);
  for (const p of months(from, last)) {
    await knex.raw(`CREATE TABLE ${p.name} PARTITION OF channel_events_partitioned FOR VALUES FROM (${p.start}) TO (${p.end})`);
  }
  await knex.raw('CREATE TABLE channel_events_pdefault PARTITION OF channel_events_partitioned DEFAULT');
  await swap(knex, 'channel_events_partitioned', 'account_id, id, at');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE channel_events IN ACCESS EXCLUSIVE MODE');
  await knex.raw('CREATE TABLE channel_events_plain (LIKE channel_events INCLUDING DEFAULTS)');
  // A ref replayed after its ref row was trimmed (older than the retention) may have two events: the old shape keeps one.
  await knex.raw(`DELETE FROM channel_events a USING channel_events b
                   WHERE a.ref_id IS NOT NULL AND a.ref_id = b.ref_id AND a.account_id = b.account_id
                     AND a.channel = b.channel AND a.type = b.type AND a.id > b.id`);
  await swap(knex, 'channel_events_plain', 'account_id, id');
  await knex.raw(
    'CREATE UNIQUE INDEX channel_events_ref_unique ON channel_events (account_id, channel, type, ref_id) WHERE ref_id IS NOT NULL',
  );
  await knex.raw('DROP TABLE channel_event_refs');
}
