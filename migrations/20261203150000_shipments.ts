import type { Knex } from 'knex';

/**
 * The shipping fence's table is named for what it holds: `mail_sends` → `shipments`. It fences every kind
 * of work the service ships (mail, network messages, ad tests, posts, budget changes), not mail alone.
 *
 * Rolling deploy: processes of the previous release keep running for a while after this migration and
 * still say `mail_sends`. A view of that name over `shipments` serves them for one release: a view that
 * selects every column of one table is updatable in Postgres, so their INSERT … RETURNING *, SELECT,
 * conditional UPDATE … RETURNING * and count work unchanged (none of them uses ON CONFLICT, which a view
 * does not take). Its columns are fixed when it is made, so a column added to `shipments` while it exists
 * is not seen through it. The next release drops it (docs/decisions/stores.md, "Renamed tables").
 *
 * Indexes and constraints named after the old table are renamed with it (nothing refers to them by name).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE mail_sends RENAME TO shipments');
  await knex.raw(`
    DO $$
    DECLARE r record;
    BEGIN
      FOR r IN SELECT conname FROM pg_constraint
               WHERE conrelid = 'shipments'::regclass AND conname LIKE 'mail\\_sends\\_%' LOOP
        EXECUTE format('ALTER TABLE shipments RENAME CONSTRAINT %I TO %I', r.conname, 'shipments_' || substr(r.conname, 12));
      END LOOP;
      FOR r IN SELECT indexname FROM pg_indexes
               WHERE schemaname = current_schema() AND tablename = 'shipments' AND indexname LIKE 'mail\\_sends\\_%' LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.indexname, 'shipments_' || substr(r.indexname, 12));
      END LOOP;
    END $$`);
  await knex.raw('CREATE VIEW mail_sends AS SELECT * FROM shipments');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP VIEW mail_sends');
  await knex.raw(`
    DO $$
    DECLARE r record;
    BEGIN
      FOR r IN SELECT conname FROM pg_constraint
               WHERE conrelid = 'shipments'::regclass AND conname LIKE 'shipments\\_%' LOOP
        EXECUTE format('ALTER TABLE shipments RENAME CONSTRAINT %I TO %I', r.conname, 'mail_sends_' || substr(r.conname, 11));
      END LOOP;
      FOR r IN SELECT indexname FROM pg_indexes
               WHERE schemaname = current_schema() AND tablename = 'shipments' AND indexname LIKE 'shipments\\_%' LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.indexname, 'mail_sends_' || substr(r.indexname, 11));
      END LOOP;
    END $$`);
  await knex.raw('ALTER TABLE shipments RENAME TO mail_sends');
}
