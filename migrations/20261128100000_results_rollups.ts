import type { Knex } from 'knex';

/**
 * `/results` reads pre-aggregated counts per account and hour instead of raw history
 * (docs/decisions/results.md, "Rollups"):
 * - `channel_events.xid`: the transaction that wrote the event (`pg_current_xact_id()`). The rollup pass folds
 *   events whose transaction ended below its snapshot's xmin into `channel_event_rollups`, and moves the
 *   watermark there in the same transaction, so each event is counted once even when transactions commit out
 *   of id order or the pass dies half way.
 * - `results_rollup_deltas`: an append-only log the triggers on conversions, agent turns, review cards and
 *   workflow runs write (+1/-1 per contribution, a conversion's value), folded the same way into `results_rollups`.
 *   Writers only insert, so concurrent ones never wait on one hot counter row.
 * - `results_rollup_watermark`: the one global watermark (a transaction id): everything below it is in the rollups.
 * Existing history is folded here; rows written before this migration carry no xid and are never folded again.
 */
const HOUR_OF = (col: string) => `(${col} / 3600000) * 3600000`;

/** What one row of a harness table adds to `/results` `harness`: (metric, time) pairs; the rules of harness.repository.ts. */
const HARNESS_KEYS = `
CREATE FUNCTION results_harness_keys(tbl text, r jsonb) RETURNS TABLE (metric text, at bigint) LANGUAGE sql IMMUTABLE AS $$
  SELECT 'turns', (r->>'finished_at')::bigint
   WHERE tbl = 'agent_turns' AND r->>'finished_at' IS NOT NULL AND r->>'status' IN ('replied', 'failed') AND r->>'started_at' IS NOT NULL
  UNION ALL
  SELECT 'cardsCreated', (r->>'created_at')::bigint
   WHERE tbl = 'review_cards' AND NOT (r->>'status' = 'resolved' AND r->'resolution'->>'action' = 'merged')
  UNION ALL
  SELECT m.metric, (r->>'resolved_at')::bigint
    FROM (SELECT r->>'status' IN ('resolved', 'sent') AS done, r->>'status' AS status,
                 r->'resolution'->>'by' AS by, r->'resolution'->>'action' AS action) c,
         LATERAL (VALUES
           ('approvedByPerson', c.done AND c.by = 'person' AND c.action IN ('approve', 'send', 'answer', 'choose')),
           ('autoResolvedByTrustLadder', c.done AND c.by = 'trust_ladder'),
           ('resolvedBySetting', c.done AND c.by = 'setting'),
           ('dismissed', c.status = 'dismissed')) AS m(metric, hit)
   WHERE tbl = 'review_cards' AND r->>'resolved_at' IS NOT NULL AND m.hit
  UNION ALL
  SELECT CASE WHEN r->>'status' = 'done' THEN 'workflowRunsSucceeded' ELSE 'workflowRunsFailed' END, (r->>'finished_at')::bigint
   WHERE tbl = 'workflow_runs' AND r->>'finished_at' IS NOT NULL AND r->>'status' IN ('done', 'failed')
$$`;

const HARNESS_TRIGGER = `
CREATE FUNCTION results_harness_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO results_rollup_deltas (account_id, bucket, metric, key1, key2, n, value)
  SELECT x.account_id, ${HOUR_OF('x.at')}, x.metric, '', '', sum(x.d), 0
    FROM (SELECT OLD.account_id AS account_id, k.metric, k.at, -1 AS d
            FROM results_harness_keys(TG_TABLE_NAME, to_jsonb(OLD)) k WHERE TG_OP <> 'INSERT'
          UNION ALL
          SELECT NEW.account_id, k.metric, k.at, 1
            FROM results_harness_keys(TG_TABLE_NAME, to_jsonb(NEW)) k WHERE TG_OP <> 'DELETE') x
   GROUP BY 1, 2, 3 HAVING sum(x.d) <> 0;
  RETURN NULL;
END $$`;

/** A conversion counts toward `conversionValue` once aggregation gave it a channel, with a value and a currency. */
const VALUE_TRIGGER = `
CREATE FUNCTION results_value_delta() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO results_rollup_deltas (account_id, bucket, metric, key1, key2, n, value)
  SELECT x.account_id, ${HOUR_OF('x.at')}, 'conversion_value', x.channel, x.currency, sum(x.d), sum(x.d * x.value)
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

const TRIGGERS: Array<[table: string, fn: string, columns: string]> = [
  ['agent_turns', 'results_harness_delta', 'account_id, status, started_at, finished_at'],
  ['review_cards', 'results_harness_delta', 'account_id, status, resolution, resolved_at, created_at'],
  ['workflow_runs', 'results_harness_delta', 'account_id, status, finished_at'],
  ['conversions', 'results_value_delta', 'account_id, channel, currency, value, occurred_at, aggregated_at'],
];

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE channel_events ADD COLUMN xid xid8');
  await knex.raw('ALTER TABLE channel_events ALTER COLUMN xid SET DEFAULT pg_current_xact_id()');
  await knex.raw('CREATE INDEX channel_events_xid ON channel_events (xid)');
  await knex.raw(`
    CREATE TABLE channel_event_rollups (
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
    CREATE TABLE results_rollups (
      account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
      bucket bigint NOT NULL,
      metric text NOT NULL,
      key1 text NOT NULL,
      key2 text NOT NULL,
      n bigint NOT NULL,
      value numeric NOT NULL,
      PRIMARY KEY (account_id, bucket, metric, key1, key2)
    )`);
  // No foreign key: a deleted account's rows write their last deltas while the account goes; the pass skips them.
  await knex.raw(`
    CREATE TABLE results_rollup_deltas (
      account_id text NOT NULL,
      bucket bigint NOT NULL,
      metric text NOT NULL,
      key1 text NOT NULL,
      key2 text NOT NULL,
      n bigint NOT NULL,
      value numeric NOT NULL,
      xid xid8 NOT NULL DEFAULT pg_current_xact_id()
    )`);
  await knex.raw('CREATE INDEX results_rollup_deltas_xid ON results_rollup_deltas (xid)');
  await knex.raw('CREATE INDEX results_rollup_deltas_account_xid ON results_rollup_deltas (account_id, xid)');
  await knex.raw('CREATE TABLE results_rollup_watermark (name text PRIMARY KEY, xid xid8 NOT NULL)');
  await knex.raw(HARNESS_KEYS);
  await knex.raw(HARNESS_TRIGGER);
  await knex.raw(VALUE_TRIGGER);
  for (const [table, fn, columns] of TRIGGERS) {
    await knex.raw(`CREATE TRIGGER ${table}_results_rollup AFTER INSERT OR DELETE OR UPDATE OF ${columns} ON ${table}
                    FOR EACH ROW EXECUTE FUNCTION ${fn}()`);
  }
  // Backfill: the locks taken above keep writers out until this commits, so nothing is missed or counted twice.
  await knex.raw(`
    INSERT INTO channel_event_rollups (account_id, bucket, channel, type, decided_by, n, total, with_amount)
    SELECT account_id, ${HOUR_OF('at')}, channel, type, coalesce(decided_by, ''), count(*), coalesce(sum(amount), 0), count(amount)
      FROM channel_events WHERE NOT demo GROUP BY 1, 2, 3, 4, 5`);
  for (const table of ['agent_turns', 'review_cards', 'workflow_runs']) {
    await knex.raw(`
      INSERT INTO results_rollups (account_id, bucket, metric, key1, key2, n, value)
      SELECT t.account_id, ${HOUR_OF('k.at')}, k.metric, '', '', count(*), 0
        FROM ${table} t, results_harness_keys('${table}', to_jsonb(t.*)) k GROUP BY 1, 2, 3`);
  }
  await knex.raw(`
    INSERT INTO results_rollups (account_id, bucket, metric, key1, key2, n, value)
    SELECT account_id, ${HOUR_OF('occurred_at')}, 'conversion_value', channel, currency, count(*), sum(value)
      FROM conversions
     WHERE aggregated_at IS NOT NULL AND value IS NOT NULL AND currency IS NOT NULL AND channel IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5`);
  await knex.raw(`INSERT INTO results_rollup_watermark (name, xid) VALUES ('results', pg_snapshot_xmin(pg_current_snapshot()))`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [table] of TRIGGERS) await knex.raw(`DROP TRIGGER ${table}_results_rollup ON ${table}`);
  await knex.raw('DROP FUNCTION results_value_delta(), results_harness_delta(), results_harness_keys(text, jsonb)');
  await knex.raw('DROP TABLE results_rollup_watermark, results_rollup_deltas, results_rollups, channel_event_rollups');
  await knex.raw('ALTER TABLE channel_events DROP COLUMN xid');
}
