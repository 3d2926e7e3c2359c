import { randomBytes } from 'node:crypto';
import type { Db } from '../db.js';
import { storedSecret } from './secrets.repository.js';

/**
 * Where list cursors get their signing key: CURSOR_SECRET when set; otherwise 32 random bytes made by
 * the deployment's first process and kept in the database, so every process agrees, a restart keeps
 * outstanding cursors valid, and nobody can derive the key from settings. Read once per process; a
 * failed read is tried again on the next call.
 */
export function cursorSecretSource(configured: string | null, db: Db): () => Promise<string> {
  if (configured) return () => Promise.resolve(configured);
  let pending: Promise<string> | null = null;
  return () => {
    pending ??= storedSecret(db, 'cursor', randomBytes(32).toString('base64url'), Date.now()).catch((err: unknown) => {
      pending = null;
      throw err;
    });
    return pending;
  };
}
