import type { Knex } from 'knex';

/**
 * CSV imports of contacts (docs/dashboard.md, "Import"). One row per upload: the file itself until the
 * import job has read it (then null), the column mapping, and the progress a person watches. The leads and
 * contacts an import makes are written in one transaction with the row's final state, so an import is
 * either wholly in or not in at all.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('lead_imports', (t) => {
    t.text('id').notNullable();
    t.text('account_id').notNullable().references('accounts.id').onDelete('CASCADE');
    // The account key rule (test/architecture/account-key.test.ts): the key carries account_id.
    t.primary(['account_id', 'id']);
    // queued → running → done | failed
    t.text('state').notNullable();
    t.jsonb('mapping').notNullable();
    t.binary('csv');
    t.integer('total');
    t.integer('processed').notNullable().defaultTo(0);
    t.integer('imported').notNullable().defaultTo(0);
    t.integer('duplicates').notNullable().defaultTo(0);
    // [{ line, reason }] for every refused row, and [{ line, reason }] for every duplicate.
    t.jsonb('rejected').notNullable().defaultTo('[]');
    t.jsonb('duplicate_rows').notNullable().defaultTo('[]');
    t.text('error');
    t.text('created_by');
    t.bigInteger('created_at').notNullable();
    t.bigInteger('updated_at').notNullable();
    t.bigInteger('finished_at');
    t.index(['account_id', 'created_at']);
  });
  // The repair sweep's read: the few imports not finished yet.
  await knex.raw(`CREATE INDEX lead_imports_unfinished ON lead_imports (updated_at) WHERE state IN ('queued', 'running')`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('lead_imports');
}
