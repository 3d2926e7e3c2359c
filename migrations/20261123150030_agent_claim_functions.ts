import type { Knex } from 'knex';

// The two steps of the turn path that must take the account's lock (or let go of it) and then read with a
// snapshot taken after that, in one round trip (docs/decisions.md, "Agent turns: statements and
// functions"). A VOLATILE function takes a fresh snapshot for each statement it runs, so the statement
// after the lock sees every turn committed before the lock changed hands; the arguments are bound
// parameters of the calling statement (no SQL text is built from values).

export async function up(knex: Knex): Promise<void> {
  // Claims the account's oldest runnable queued turn (asynchronous commit), touches its activity and reads
  // its memory, unless turns are left `running` (`orphans` > 0). With `p_lock_namespace`, first tries the
  // account's session lock and returns no row when another connection holds it; without it, the caller
  // already holds the lock. Otherwise exactly one row; `turn` is the claimed row as JSON, or null.
  await knex.raw(
    `
    CREATE OR REPLACE FUNCTION agent_claim_turn(p_account text, p_now bigint, p_runner text, p_memory_limit int, p_lock_namespace int)
    RETURNS TABLE (orphans int, memory json, turn json)
    LANGUAGE plpgsql VOLATILE AS $fn$
    #variable_conflict use_column
    BEGIN
      IF p_lock_namespace IS NOT NULL AND NOT pg_try_advisory_lock(p_lock_namespace, hashtext(p_account)) THEN
        RETURN;
      END IF;
      RETURN QUERY
      WITH running AS (
        SELECT count(*)::int AS n FROM agent_turns WHERE account_id = p_account AND status = 'running'
      ), next AS (
        SELECT id FROM agent_turns WHERE account_id = p_account AND status = 'queued' AND not_before <= p_now ` +
      `ORDER BY created_at, id LIMIT 1
      ), claimed AS (
        UPDATE agent_turns t SET status = 'running', started_at = coalesce(t.started_at, p_now), ` +
      `attempts = t.attempts + 1, runner = p_runner
        FROM next, running WHERE t.id = next.id AND t.status = 'queued' AND running.n = 0
        RETURNING t.*
      ), state AS (
        INSERT INTO agent_state (account_id, last_activity_at, last_turn_at) SELECT p_account, p_now, p_now FROM claimed
        ON CONFLICT (account_id) DO UPDATE
          SET last_activity_at = GREATEST(agent_state.last_activity_at, EXCLUDED.last_activity_at), last_turn_at = EXCLUDED.last_turn_at
      )
      SELECT (SELECT n FROM running),
        CASE WHEN c.id IS NULL THEN NULL ELSE
          (SELECT coalesce(json_agg(m.text ORDER BY m.id), '[]'::json) FROM
            (SELECT id, text FROM agent_memory WHERE account_id = p_account ORDER BY id DESC LIMIT p_memory_limit) m)
        END,
        CASE WHEN c.id IS NULL THEN NULL ELSE row_to_json(c) END
      FROM (SELECT set_config('synchronous_commit', 'off', true)) async_commit LEFT JOIN claimed c ON true;
    END
    $fn$`,
  );

  // Lets go of the account's session lock, then asks whether it has a runnable turn (a turn recorded by
  // someone who found the lock busy is seen).
  await knex.raw(`
    CREATE OR REPLACE FUNCTION agent_unlock_then_runnable(p_lock_namespace int, p_account text, p_now bigint)
    RETURNS TABLE (released boolean, runnable boolean)
    LANGUAGE plpgsql VOLATILE AS $fn$
    BEGIN
      released := pg_advisory_unlock(p_lock_namespace, hashtext(p_account));
      SELECT EXISTS (SELECT 1 FROM agent_turns WHERE account_id = p_account AND status = 'queued' AND not_before <= p_now) INTO runnable;
      RETURN NEXT;
    END
    $fn$`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP FUNCTION IF EXISTS agent_unlock_then_runnable(int, text, bigint)');
  await knex.raw('DROP FUNCTION IF EXISTS agent_claim_turn(text, bigint, text, int, int)');
}
