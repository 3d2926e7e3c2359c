import type { Knex } from 'knex';

/**
 * A minute grain beside the hourly rollups, so `/results` counts only partial minutes raw at its edges
 * (docs/decisions/results.md, "The minute grain"):
 * - `channel_event_rollups_minute` and `results_rollups_minute`: the hourly tables' columns and keys, bucket = minute.
 * - The delta triggers write the minute of each contribution; the fold adds it to the minute table and its hour to
 *   the hourly table, in the pass's one transaction.
 * - `results_rollup_watermark.minutes_from`: from this time on the minute tables hold every count. Counts folded
 *   before this migration are in the hourly tables only, and a row's time may lie ahead of when it was written (a
 *   conversion's `occurredAt` up to five minutes ahead, a host's clock), so it is the end of the latest hour any
 *   of them counts in (0 on a fresh database: nothing was folded by hour only), not the migration's own time.
 * - A pass of an older release (hourly only) would leave the minute tables short: the watermark moves only in a
 *   transaction that says it folds both grains (`growth.rollup_grain = 'minute'`), so such a pass fails whole.
 */
const MINUTE_OF = (col: string) => `(${col} / 60000) * 60000`;
const HOUR_OF = (col: string) => `(${col} / 3600000) * 3600000`;

/** The delta functions of migration 20261128100000, with the bucket given. */
const harnessDelta = (bucketOf: (col: string) => string) => `
CREATE OR REPLACE FUNCTION results_harness_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO results_rollup_deltas (account_id, bucket, metric, key1, key2, n, value)
  SELECT x.account_id, ${bucketOf('x.at')}, x.metric, '', '', sum(x.d), 0
    FROM (SELECT OLD.account_id AS account_id, k.metric, k.at, -1 AS d
            FROM results_harness_keys(TG_TABLE_NAME, to_jsonb(OLD)) k WHERE TG_OP <> 'INSERT'
          UNION ALL
          SELECT NEW.account_id, k.metric, k.at, 1
            FROM results_harness_keys(TG_TABLE_NAME, to_jsonb(NEW)) k WHERE TG_OP <> 'DELETE') x
   GROUP BY 1, 2, 3 HAVING sum(x.d) <> 0;
  RETURN NULL;
END $$`;

const valueDelta = (bucketOf: (col: string) => string) => `
CREATE OR REPLACE FUNCTION results_value_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO results_rollup_deltas (account_id, bucket, metric, key1, key2, n, value)
  SELECT x.account_id, ${bucketOf('x.at')}, 'conversion_value', x.channel, x.currency, sum(x.d), sum(x.d * x.value)
    FROM (SELECT OLD.account_id AS account_id, OLD.occurred_at AS at, OLD.channel AS channel, OLD.currency AS currency,
                 OLD.value AS value, -1 AS d
           WHERE TG_OP <> 'INSERT' AND OLD.aggregated_at IS NOT NULL AND OLD.value IS NOT NULL
             AND OLD.currency IS NOT NULL AND OLD.channel IS NOT NULL
          UNION ALL
          SELECT NEW.account_id, NEW.occurred_at, NEW.channel, NEW.currency, NEW.value, 1
           WHERE TG_OP <> 'DELETE' AND NEW.aggregated_at IS NOT NULL AND NEW.value IS NOT NULL
             AND NEW.currency IS NOT NULL AND NEW.channel IS NOT NULL) x
   GROUP BY 1, 2, 3, 4, 5 HAVING sum(x.d) <> 0 OR sum(x.d * x.value) <> 0;
  RETURN NULL;
END $$`;

const HOURLY_ONLY_PASS = `
CREATE FUNCTION results_rollup_hourly_only_pass() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'rollup pass of an older release: it folds no minute rollups (migration 20261130100000)';
END $$`;

export async function up(knex: Knex): Promise<void> {
  // Writers of the triggers' tables finish first and wait for this commit: no delta with an hour bucket comes after
  // minutes_from is read. The ALTER below waits for a running pass and holds the next one off likewise.
  await knex.raw('LOCK TABLE agent_turns, review_cards, workflow_runs, conversions IN SHARE MODE');
  await knex.raw('ALTER TABLE results_rollup_watermark ADD COLUMN minutes_from bigint NOT NULL DEFAULT 0');
  await knex.raw(`
    CREATE TABLE channel_event_rollups_minute (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      bucket bigint NOT NULL,
      channel text NOT NULL,
      type text NOT NULL,
      decided_by text NOT NULL,
      n bigint NOT NULL,
      total float8 NOT NULL,
      with_amount bigint NOT NULL,
      PRIMARY KEY (account_id, bucket, channel, type, decided_by)
    )`);
  await knex.raw(`
    CREATE TABLE results_rollups_minute (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      bucket bigint NOT NULL,
      metric text NOT NULL,
      key1 text NOT NULL,
      key2 text NOT NULL,
      n bigint NOT NULL,
      value numeric NOT NULL,
      PRIMARY KEY (account_id, bucket, metric, key1, key2)
    )`);
  // Retention deletes by age across accounts (src/retention/kinds.ts).
  await knex.raw('CREATE INDEX channel_event_rollups_minute_bucket ON channel_event_rollups_minute (bucket)');
  await knex.raw('CREATE INDEX results_rollups_minute_bucket ON results_rollups_minute (bucket)');
  await knex.raw(harnessDelta(MINUTE_OF));
  await knex.raw(valueDelta(MINUTE_OF));
  await knex.raw(HOURLY_ONLY_PASS);
  await knex.raw(`CREATE TRIGGER results_rollup_watermark_grain BEFORE UPDATE OF xid ON results_rollup_watermark FOR EACH ROW
                  WHEN (current_setting('growth.rollup_grain', true) IS DISTINCT FROM 'minute')
                  EXECUTE FUNCTION results_rollup_hourly_only_pass()`);
  // Everything folded so far, and every delta written with an hour bucket, counts before the end of the latest such hour.
  await knex.raw(`
    UPDATE results_rollup_watermark SET minutes_from = coalesce((SELECT max(b) + 3600000 FROM (
      SELECT max(bucket) AS b FROM channel_event_rollups
      UNION ALL SELECT max(bucket) FROM results_rollups
      UNION ALL SELECT max(${HOUR_OF('bucket')}) FROM results_rollup_deltas) m), 0)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER results_rollup_watermark_grain ON results_rollup_watermark');
  await knex.raw('DROP FUNCTION results_rollup_hourly_only_pass()');
  // Deltas not folded yet keep their minute bucket, which the hourly fold reads as a time inside its hour.
  await knex.raw(harnessDelta(HOUR_OF));
  await knex.raw(valueDelta(HOUR_OF));
  await knex.raw('DROP TABLE results_rollups_minute, channel_event_rollups_minute');
  await knex.raw('ALTER TABLE results_rollup_watermark DROP COLUMN minutes_from');
}
