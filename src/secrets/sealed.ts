import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Queryable } from '../db.js';
import { storedSecret } from './secrets.repository.js';

/** The service secret that seals provider keys: made by the first process that needs it, like the cursor key. */
const SEAL_SECRET = 'provider-keys';

async function sealKey(q: Queryable): Promise<Buffer> {
  return Buffer.from(await storedSecret(q, SEAL_SECRET, randomBytes(32).toString('base64url'), Date.now()), 'base64url');
}

/**
 * A secret given to the service (a provider's API key) as it is kept at rest: AES-256-GCM under the
 * service secret `provider-keys`, `v1.<iv>.<tag>.<ciphertext>` in base64url. A database dump alone does
 * not show it only when the secrets table is kept apart; it is never returned, logged or audited.
 */
export async function seal(q: Queryable, plain: string): Promise<string> {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', await sealKey(q), iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

/** The secret `seal` kept; throws when it was not sealed by this deployment's key. */
export async function unseal(q: Queryable, sealed: string): Promise<string> {
  const [v, iv, tag, data] = sealed.split('.');
  if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('a sealed secret is malformed');
  const decipher = createDecipheriv('aes-256-gcm', await sealKey(q), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}
