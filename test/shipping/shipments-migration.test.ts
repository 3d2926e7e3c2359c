import { describe, expect, it } from 'vitest';
import { migrateUpTo, migrationDatabase } from '../helpers/migration-db.js';

/**
 * The migration that names the fence table for what it holds (`mail_sends` → `shipments`) keeps the
 * previous release working through a rolling deploy: its statements, as its fence repository sent them,
 * still work against `mail_sends` (a view over `shipments`) and see the same rows.
 */
const MIGRATION = '20261203150000_shipments';
const scratch = migrationDatabase();

const fence = (id: string, cardId: string) => ({
  id,
  account_id: 'a1',
  card_id: cardId,
  idempotency_key: `key-${id}`,
  status: 'sending',
  to_address: 'jane@x.example',
  subject: 'Hi',
  body: 'Hello',
  decided_by: 'person',
  kind_of_work: 'email',
  step: 0,
  details: null,
  created_at: 1,
  updated_at: 1,
});

// Migrates a fresh database step by step: slow on a loaded machine.
describe('the shipments migration', { timeout: 120_000 }, () => {
  it('renames the table and its indexes, and old statements against mail_sends still insert, read and update', async () => {
    const db = await scratch.open();
    await migrateUpTo(db, MIGRATION);
    await db.raw(`INSERT INTO accounts (id, name, created_at) VALUES ('a1', 'A', 0)`);
    await db('mail_sends').insert(fence('before', 'c0'));

    await db.migrate.up();

    const { rows: kinds } = await db.raw(
      `SELECT relname, relkind FROM pg_class WHERE relname IN ('mail_sends', 'shipments') ORDER BY relname`,
    );
    expect(kinds).toEqual([
      { relname: 'mail_sends', relkind: 'v' },
      { relname: 'shipments', relkind: 'r' },
    ]);
    const { rows: indexes } = await db.raw(`SELECT indexname FROM pg_indexes WHERE tablename = 'shipments' ORDER BY indexname`);
    expect(indexes.map((r: { indexname: string }) => r.indexname).every((n: string) => n.startsWith('shipments_'))).toBe(true);
    expect(indexes.map((r: { indexname: string }) => r.indexname)).toContain('shipments_one_live_per_card_step');

    // The previous release's fence repository, statement for statement (src/shipping/fence.repository.ts).
    const [inserted] = await db('mail_sends').insert(fence('after', 'c1')).returning('*');
    expect(inserted).toMatchObject({ id: 'after', status: 'sending', attempts: 0, step: 0, provider_id: null });
    expect(await db('mail_sends').where({ account_id: 'a1', id: 'before' }).first()).toMatchObject({ id: 'before', card_id: 'c0' });
    expect(await db('mail_sends').where({ account_id: 'a1', card_id: 'c1', step: 0 }).whereNot('status', 'not_sent').first()).toMatchObject(
      {
        id: 'after',
      },
    );
    const [updated] = await db('mail_sends')
      .where({ account_id: 'a1', id: 'after' })
      .whereIn('status', ['sending'])
      .update({ status: 'sent', provider_id: 'p-1', settled_at: 5, updated_at: 5 })
      .returning('*');
    expect(updated).toMatchObject({ id: 'after', status: 'sent', provider_id: 'p-1' });
    // The conditional update of a fence no longer in `from` changes nothing.
    expect(
      await db('mail_sends').where({ account_id: 'a1', id: 'after' }).whereIn('status', ['sending']).update({ status: 'pending' }),
    ).toBe(0);
    const count = await db('mail_sends').where({ account_id: 'a1', card_id: 'c1', step: 0, status: 'not_sent' }).count('* as n').first();
    expect(Number(count?.n)).toBe(0);
    // The rules of the table hold through the view: a second live fence of a card is refused.
    await expect(db('mail_sends').insert(fence('twice', 'c1'))).rejects.toMatchObject({ code: '23505' });

    // Both names see the same rows, whichever wrote them.
    await db('shipments').insert(fence('new-code', 'c2'));
    const viaOld = (await db('mail_sends').orderBy('id').pluck('id')) as string[];
    const viaNew = (await db('shipments').orderBy('id').pluck('id')) as string[];
    expect(viaOld).toEqual(['after', 'before', 'new-code']);
    expect(viaNew).toEqual(viaOld);
    expect(await db('shipments').where({ id: 'after' }).first()).toMatchObject({ status: 'sent', provider_id: 'p-1' });

    // Down: the view goes and the table has its old name again.
    await db.migrate.down();
    const { rows: back } = await db.raw(`SELECT relname, relkind FROM pg_class WHERE relname IN ('mail_sends', 'shipments')`);
    expect(back).toEqual([{ relname: 'mail_sends', relkind: 'r' }]);
  });
});
