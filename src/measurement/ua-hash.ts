import { createHmac, randomBytes } from 'node:crypto';
import type { Db } from '../db.js';
import { storedSecret } from '../secrets/secrets.repository.js';

const keys = new WeakMap<object, Promise<string>>();

/**
 * The keyed hash a visit keeps of its User-Agent (HMAC-SHA256, hex): enough to tell one browser's
 * visits from another's, useless to anyone without the key. The key is made by the deployment's first
 * process and kept in the database (like the cursor secret), read once per process; a failed read is
 * tried again on the next call.
 */
export async function hashUserAgent(db: Db, userAgent: string): Promise<string> {
  return keyedHash(db, userAgent);
}

/** HMAC-SHA256 (hex) of `text` under the same key: what a public door keeps of a client instead of its address. */
export async function keyedHash(db: Db, text: string): Promise<string> {
  let key = keys.get(db);
  if (!key) {
    key = storedSecret(db, 'ua-hash', randomBytes(32).toString('base64url'), Date.now());
    keys.set(db, key);
    key.catch(() => keys.delete(db));
  }
  return createHmac('sha256', await key)
    .update(text)
    .digest('hex');
}
