import { afterAll } from 'vitest';
import { createDb, type Db } from '../../src/db.js';
import { testDatabaseName, urlFor, withAdminClient } from './db.js';

/**
 * An empty database of a migration test's own (not the migrated template): `open` makes it, and it is dropped
 * after the file's tests.
 */
export function migrationDatabase(): { open(): Promise<Db> } {
  const name = testDatabaseName();
  let db: Db | undefined;
  afterAll(async () => {
    await db?.destroy();
    await withAdminClient((c) => c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  });
  return {
    async open() {
      await withAdminClient((c) => c.query(`CREATE DATABASE "${name}"`));
      db = createDb(urlFor(name), 2);
      return db;
    },
  };
}

/** Runs migrations one by one until `migration` is the next one. */
export async function migrateUpTo(d: Db, migration: string): Promise<void> {
  for (;;) {
    // With our migration source (src/db.ts), pending migrations are their file names.
    const [, pending] = (await d.migrate.list()) as [unknown, string[]];
    if (!pending[0] || pending[0].startsWith(migration)) return;
    await d.migrate.up();
  }
}
