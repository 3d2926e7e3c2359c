import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Db } from '../../src/db.js';
import { threadsRepository } from '../../src/mail/threads.repository.js';
import { migrateUpTo, migrationDatabase } from '../helpers/migration-db.js';

const MIGRATION = '20261202130000_reply_token_hashes';
const scratch = migrationDatabase();
const sha = (t: string) => createHash('sha256').update(t).digest('hex');

const SEED = `
INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', 0);
INSERT INTO mail_threads (send_id, account_id, card_id, reply_token, message_id, to_address, created_at)
  VALUES ('s1', 'a1', 'c1', 'tok1aaaaaaaaaaaaaaaa', '<m1@localhost>', 'jane@x.example', 0);`;

// Migrates a fresh database step by step: slow on a loaded machine.
describe('the reply-token hash migration', { timeout: 120_000 }, () => {
  it('hashes existing tokens, and a row a previous-version process writes with a plaintext token gets its hash too', async () => {
    const db: Db = await scratch.open();
    await migrateUpTo(db, MIGRATION);
    await db.raw(SEED);
    await db.migrate.latest();

    const [row] = await db('mail_threads').where({ send_id: 's1' }).select('reply_token', 'reply_token_hash');
    expect(row).toEqual({ reply_token: 'tok1aaaaaaaaaaaaaaaa', reply_token_hash: sha('tok1aaaaaaaaaaaaaaaa') });
    // Found by the hash, as this version looks; the previous version's lookup by plaintext still finds it mid-deploy.
    expect((await threadsRepository(db).byToken('tok1aaaaaaaaaaaaaaaa'))?.sendId).toBe('s1');
    expect(await db('mail_threads').where({ reply_token: 'tok1aaaaaaaaaaaaaaaa' }).first('send_id')).toEqual({ send_id: 's1' });

    // A previous-version process inserts with the plaintext only: the trigger fills the hash.
    await db('mail_threads').insert({
      send_id: 's2',
      account_id: 'a1',
      card_id: 'c2',
      reply_token: 'tok2bbbbbbbbbbbbbbbb',
      message_id: '<m2@localhost>',
      to_address: 'bob@x.example',
      created_at: 0,
    });
    expect((await threadsRepository(db).byTokens(['tok2bbbbbbbbbbbbbbbb', 'nosuchtoken00000']))[0]?.sendId).toBe('s2');
    // This version writes the hash alone.
    await threadsRepository(db).insert({
      sendId: 's3',
      accountId: 'a1',
      cardId: 'c3',
      leadId: null,
      sequenceId: null,
      step: 0,
      replyToken: 'tok3cccccccccccccccc',
      messageId: '<m3@localhost>',
      to: 'cy@x.example',
      createdAt: 0,
    });
    expect(await db('mail_threads').where({ send_id: 's3' }).first('reply_token', 'reply_token_hash')).toEqual({
      reply_token: null,
      reply_token_hash: sha('tok3cccccccccccccccc'),
    });
    // Clearing the plaintext keeps the hash.
    await db('mail_threads').update({ reply_token: null });
    expect((await threadsRepository(db).byToken('tok1aaaaaaaaaaaaaaaa'))?.sendId).toBe('s1');
  });
});
