import type { Queryable } from '../db.js';

/**
 * The stored secret called `name`, storing `candidate` first when there is none. Processes starting
 * together each offer their own candidate; the first insert wins and all of them read the winner.
 */
export async function storedSecret(db: Queryable, name: string, candidate: string, now: number): Promise<string> {
  await db.raw('INSERT INTO service_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [
    name,
    candidate,
    now,
  ]);
  const row = (await db('service_secrets').where({ name }).first('value')) as { value: string } | undefined;
  if (!row) throw new Error(`service secret ${name} is missing after its insert`);
  return row.value;
}

/** The stored secret called `name`, or null: read only, never made. */
export async function existingSecret(db: Queryable, name: string): Promise<string | null> {
  const row = (await db('service_secrets').where({ name }).first('value')) as { value: string } | undefined;
  return row?.value ?? null;
}

/** Forgets the stored secret called `name`; true when there was one. */
export async function forgetSecret(db: Queryable, name: string): Promise<boolean> {
  return (await db('service_secrets').where({ name }).delete()) > 0;
}
