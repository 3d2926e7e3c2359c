import type { Knex } from 'knex';

/**
 * Dashboard agent turns were kept under the session's row id; a person's conversation is now kept under the
 * person's id across sessions (docs/dashboard.md, "A person's agent conversation"). Turns already written
 * move to their person. A turn whose client request id the person already used in another session (a retry
 * key is unique per conversation) stays where it is: it is then listed in no thread, as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE agent_turns t SET token_id = s.person_id
      FROM dashboard_sessions s
     WHERE t.account_id = s.account_id AND t.token_id = s.id
       AND (t.client_request_id IS NULL OR NOT EXISTS (
             SELECT 1 FROM agent_turns o
               JOIN dashboard_sessions os ON os.account_id = o.account_id AND os.id = o.token_id
              WHERE o.account_id = t.account_id AND os.person_id = s.person_id
                AND o.client_request_id = t.client_request_id AND o.id < t.id))`);
}

export async function down(): Promise<void> {
  // Which session wrote a turn is not kept once it moved to its person: nothing to undo.
}
