import pg from 'pg';
import { directUrl } from '../../src/db.js';
import { createSubscriber, keyspace } from '../../src/redis.js';
import type { TestEnv } from './env.js';
import { waitFor } from './processes.js';

/**
 * Triggers in a test file's own database that hold a chosen insert, so a test orders things by events
 * instead of by how long a step takes.
 */

/** A SQL string literal. */
export const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

let made = 0;

/**
 * Holds the first insert into `table` matching `condition` (a PL/pgSQL expression over NEW) for up to
 * two minutes: AFTER holds once the row is written in the writer's transaction, BEFORE before it is.
 * Once only: a sequence is not rolled back with a killed transaction. Pair it with kill -9 and
 * `client_connection_check_interval` so Postgres abandons the held statement once its client is gone.
 */
export async function holdOnce(env: Pick<TestEnv, 'deps'>, table: string, timing: 'BEFORE' | 'AFTER', condition: string) {
  const name = `hold_${process.pid}_${++made}`;
  await env.deps.db.raw(`
    CREATE SEQUENCE ${name}_seq;
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${condition} THEN
        IF nextval('${name}_seq') = 1 THEN PERFORM pg_sleep(120); END IF;
      END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER ${name} ${timing} INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`);
  return {
    /** Resolves once a statement sleeps in the trigger. */
    reached: () =>
      waitFor(
        async () =>
          (await env.deps.db.raw(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'`)).rows
            .length > 0,
        `the held insert into ${table}`,
        60_000,
      ),
  };
}

/**
 * A gate on inserts into `table` (or updates, with `on: 'UPDATE'`; the condition may then read OLD)
 * matching `condition`: while it is closed they wait (on an advisory lock this test holds); `open()`
 * lets them all through, for good.
 */
export async function gate(env: Pick<TestEnv, 'deps' | 'config'>, table: string, condition: string, on: 'INSERT' | 'UPDATE' = 'INSERT') {
  const key = 424_200 + ++made;
  // A session lock: on Postgres itself, past any pooler.
  const holder = new pg.Client({ connectionString: directUrl(env.config) });
  await holder.connect();
  await holder.query('SELECT pg_advisory_lock($1)', [key]);
  let opened = false;
  const name = `gate_${process.pid}_${made}`;
  await env.deps.db.raw(`
    CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF ${condition} THEN PERFORM pg_advisory_xact_lock_shared(${key}); END IF;
      RETURN NEW;
    END $$;
    CREATE TRIGGER ${name} BEFORE ${on} ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();`);
  return {
    /** Resolves once a write waits at the gate. */
    reached: () =>
      waitFor(
        async () =>
          (
            await env.deps.db.raw(
              `SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = ? AND database = (SELECT oid ` +
                `FROM pg_database WHERE datname = current_database())`,
              [key],
            )
          ).rows.length > 0,
        `a write to ${table} at the gate`,
        60_000,
      ),
    async open() {
      if (opened) return;
      opened = true;
      await holder.end();
    },
  };
}

/**
 * Resolves when a cancel notice for `turnId` is published on the turn bus. A worker's subscriber is
 * sent the same notice by the same PUBLISH, so once this resolves the worker has it too (or is reading it).
 */
export async function cancelHeard(
  env: Pick<TestEnv, 'deps' | 'config'>,
  turnId: string,
): Promise<{ heard: Promise<void>; close(): Promise<void> }> {
  const sub = createSubscriber(env.config, 'test-cancel-heard');
  const channel = `${keyspace(env.config.queuePrefix)}:agent:cancel`;
  let resolve!: () => void;
  const heard = new Promise<void>((r) => (resolve = r));
  sub.on('message', (ch: string, id: string) => {
    if (ch === channel && id === turnId) resolve();
  });
  if (sub.status !== 'ready') await new Promise((r) => sub.once('ready', r));
  await sub.subscribe(channel);
  return { heard, close: async () => void (await sub.quit().catch(() => sub.disconnect())) };
}
