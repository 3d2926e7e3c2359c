import { describe, expect, it } from 'vitest';
import { migrateUpTo, migrationDatabase } from '../helpers/migration-db.js';

/**
 * The migration that puts the account into every key runs on a database with data: child rows get the account
 * of their parent, and the composite keys hold on what was there (decisions/sharding.md).
 */
const MIGRATION = '20261129100000_account_keys';
const scratch = migrationDatabase();

const SEED = `
INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', 0), ('a2', 'B', 0);
INSERT INTO leads (id, account_id, seq, domain, status, created_at, updated_at)
  VALUES ('l1', 'a1', 1, 'x.example', 'new', 0, 0), ('l2', 'a2', 2, 'x.example', 'new', 0, 0);
INSERT INTO lead_research (lead_id, key, seq, reasoning, updated_at) VALUES ('l1', 'k', 1, 'r', 0), ('l2', 'k', 2, 'r', 0);
INSERT INTO lead_contacts (id, lead_id, account_id, seq, created_at) VALUES ('c1', 'l1', 'a1', 1, 0);
INSERT INTO agent_turns (id, account_id, kind, origin, status, created_at, not_before)
  VALUES ('t1', 'a1', 'message', 'api', 'done', 0, 0), ('t2', 'a2', 'message', 'api', 'done', 0, 0);
INSERT INTO agent_turn_steps (turn_id, round, idx, result) VALUES ('t1', 0, 0, '{}'), ('t2', 0, 0, '{}');
INSERT INTO destinations (id, account_id, name, created_at) VALUES ('d1', 'a1', 'inbox', 0), ('d2', 'a2', 'inbox', 0);
INSERT INTO destination_deliveries (destination_id, run_id, text, at) VALUES ('d1', 'r1', 'x', 0), ('d2', 'r2', 'y', 0);`;

describe('the account-key migration', () => {
  it('fills account_id of child rows from their parents and keeps the rows', async () => {
    const db = await scratch.open();
    await migrateUpTo(db, MIGRATION);
    await db.raw(SEED);

    await db.migrate.up();

    const pairs = async (table: string, column: string) =>
      (await db(table).select('account_id', column).orderBy(column)) as Record<string, string>[];
    expect(await pairs('agent_turn_steps', 'turn_id')).toEqual([
      { account_id: 'a1', turn_id: 't1' },
      { account_id: 'a2', turn_id: 't2' },
    ]);
    expect(await pairs('lead_research', 'lead_id')).toEqual([
      { account_id: 'a1', lead_id: 'l1' },
      { account_id: 'a2', lead_id: 'l2' },
    ]);
    expect(await pairs('destination_deliveries', 'destination_id')).toEqual([
      { account_id: 'a1', destination_id: 'd1' },
      { account_id: 'a2', destination_id: 'd2' },
    ]);
    // The foreign keys are composite now: a child cannot point at another account's parent.
    await expect(
      db.raw("INSERT INTO lead_contacts (id, lead_id, account_id, seq, created_at) VALUES ('c2', 'l1', 'a2', 2, 0)"),
    ).rejects.toMatchObject({ code: '23503', constraint: 'lead_contacts_lead_id_foreign' });
  });
});
