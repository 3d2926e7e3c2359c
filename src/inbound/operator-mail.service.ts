import { NotFound } from '../errors.js';
import { newId } from '../ids.js';
import type { Queryable } from '../db.js';
import { type OperatorMail, operatorMailRepository } from './operator-mail.repository.js';

/** Keeps a message to postmaster@ for the operator: never parsed, never matched to a lead or an account. */
export async function storeOperatorMail(
  db: Queryable,
  m: { mailFrom: string | null; rcptTo: string[]; clientIp: string | null; helo: string | null; raw: Buffer },
): Promise<string> {
  const id = newId('opm');
  await operatorMailRepository(db).insert({ ...m, id, size: m.raw.length, receivedAt: Date.now() });
  return id;
}

/** Operator mail, newest first, without its bytes (`mail postmaster-list`). */
export async function listOperatorMail(db: Queryable, limit: number): Promise<OperatorMail[]> {
  return operatorMailRepository(db).list(limit);
}

/** One operator message with its text as received (`mail postmaster-read`). */
export async function readOperatorMail(db: Queryable, id: string): Promise<OperatorMail & { raw: string }> {
  const found = await operatorMailRepository(db).find(id);
  if (!found) throw new NotFound();
  return { ...found, raw: found.raw.toString('utf8') };
}
