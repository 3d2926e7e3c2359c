import { describe, expect, it } from 'vitest';
import { migrateUpTo, migrationDatabase } from '../helpers/migration-db.js';

/**
 * The migration that keys `inbound_messages` by account runs on a database with rows stored without one: each is
 * placed from what it was matched to (its send, its lead), else from an envelope token of ours; the rest are deleted.
 */
const MIGRATION = '20261130120000_inbound_messages_account_key';
const scratch = migrationDatabase();

const SEED = `
INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', 0), ('a2', 'B', 0);
INSERT INTO leads (id, account_id, seq, domain, status, created_at, updated_at) VALUES ('l2', 'a2', 1, 'x.example', 'new', 0, 0);
INSERT INTO mail_threads (send_id, account_id, card_id, reply_token, message_id, to_address, created_at)
  VALUES ('s1', 'a1', 'c1', 'tok1aaaaaaaaaaaaaaaa', '<m1@localhost>', 'jane@x.example', 0),
         ('s2', 'a2', 'c2', 'tok2bbbbbbbbbbbbbbbb', '<m2@localhost>', 'bob@x.example', 0);
INSERT INTO inbound_messages (id, account_id, via, rcpt_to, raw, size, received_at, status, send_id, lead_id) VALUES
  ('by_send', NULL, 'smtp', '[]', '\\x41', 1, 0, 'duplicate', 's1', NULL),
  ('by_lead', NULL, 'smtp', '[]', '\\x41', 1, 0, 'unplaced', NULL, 'l2'),
  ('by_token', NULL, 'smtp', '["agent@localhost", "Reply+TOK2bbbbbbbbbbbbbbbb@localhost"]', '\\x41', 1, 0, 'received', NULL, NULL),
  ('unknown_token', NULL, 'smtp', '["reply+nosuchtoken000000@localhost"]', NULL, 1, 0, 'unplaced', NULL, NULL),
  ('nothing', NULL, 'smtp', '["agent@localhost"]', '\\x41', 1, 0, 'unplaced', NULL, NULL),
  ('placed', 'a1', 'http', '[]', '\\x41', 1, 0, 'applied', 's1', NULL);`;

// Migrates a fresh database step by step: slow on a loaded machine.
describe('the inbound_messages account-key migration', { timeout: 120_000 }, () => {
  it('places rows stored without an account from their send, lead or token, deletes the rest, and keys by account', async () => {
    // A migration test reads and writes its scratch database's tables raw: the schema itself is under test.
    const db = await scratch.open();
    await migrateUpTo(db, MIGRATION);
    await db.raw(SEED);

    await db.migrate.up();

    const rows = (await db('inbound_messages').select('id', 'account_id').orderBy('id')) as { id: string; account_id: string }[];
    expect(rows).toEqual([
      { id: 'by_lead', account_id: 'a2' },
      { id: 'by_send', account_id: 'a1' },
      { id: 'by_token', account_id: 'a2' },
      { id: 'placed', account_id: 'a1' },
    ]);
    // The placed rows' raw bytes are charged to their accounts (the trigger saw account_id change).
    const bytes = await db('inbound_account_bytes').select('account_id', 'bytes').orderBy('account_id');
    expect(bytes.map((b: { account_id: string; bytes: string }) => [b.account_id, Number(b.bytes)])).toEqual([
      ['a1', 2],
      ['a2', 2],
    ]);
    await expect(
      db.raw("INSERT INTO inbound_messages (id, via, raw, size, received_at) VALUES ('x', 'smtp', '\\x41', 1, 0)"),
    ).rejects.toMatchObject({ code: '23502' });
    // The key is (account_id, id): the same id under two accounts is two rows.
    await db.raw(
      `INSERT INTO inbound_messages (id, account_id, via, size, received_at)
       VALUES ('same', 'a1', 'smtp', 1, 0), ('same', 'a2', 'smtp', 1, 0)`,
    );
    const { rows: key } = await db.raw(
      "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'inbound_messages_pkey'",
    );
    expect(key).toEqual([{ def: 'PRIMARY KEY (account_id, id)' }]);

    // Down: the key on id alone and a nullable account again (the deleted rows stay deleted).
    await db('inbound_messages').where({ id: 'same', account_id: 'a2' }).del();
    await db.migrate.down();
    const { rows: old } = await db.raw(
      "SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint WHERE conname = 'inbound_messages_pkey'",
    );
    expect(old).toEqual([{ def: 'PRIMARY KEY (id)' }]);
    await db.raw("INSERT INTO inbound_messages (id, via, size, received_at) VALUES ('x', 'smtp', 1, 0)");
  });
});
