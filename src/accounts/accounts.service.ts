import type { Db, Queryable } from '../db.js';
import { NotFound } from '../errors.js';
import { newId } from '../ids.js';

export interface Account {
  id: string;
  name: string;
  createdAt: number;
}

/** Creates an account; the id is new every call (creation is not idempotent by name). */
export async function createAccount(db: Db, name: string, opts: { demo?: boolean } = {}): Promise<Account> {
  const account = { id: newId('acct'), name, createdAt: Date.now() };
  await db('accounts').insert({ id: account.id, name, created_at: account.createdAt, demo: opts.demo === true });
  return account;
}

/**
 * Whether the account is a demo account (made by `seed demo --new-account`): the only kind `seed demo`
 * fills, and one whose mail goes to the local transport, never to a relay. False for an unknown id.
 */
export async function isDemoAccount(q: Queryable, id: string): Promise<boolean> {
  const row = await q('accounts').where({ id }).first<{ demo: boolean } | undefined>('demo');
  return row?.demo === true;
}

/** Loads an account, optionally locking its row for the rest of the transaction. */
export async function getAccount(q: Queryable, id: string, lock = false): Promise<Account> {
  let query = q('accounts').where({ id }).first<{ id: string; name: string; created_at: number } | undefined>();
  if (lock) query = query.forUpdate();
  const row = await query;
  if (!row) throw new NotFound();
  return { id: row.id, name: row.name, createdAt: row.created_at };
}
