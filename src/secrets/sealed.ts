import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SealingConfig } from '../config/sealing.js';
import type { Queryable } from '../db.js';
import { existingSecret, storedSecret } from './secrets.repository.js';

/**
 * The service secret that sealed provider keys before keys came from outside the database: made by the
 * first process that needs it (development and test only now); still read to open values sealed under it.
 */
export const DATABASE_SEAL_SECRET = 'provider-keys';

/**
 * A secret given to the service (a provider's API key, a DKIM private key) as it is kept at rest, AES-256-GCM:
 * - `v2.<key id>.<iv>.<tag>.<ciphertext>`: under the outside key of that id (SEALING_KEYS or SEALING_KEYS_FILE);
 * - `v1.<iv>.<tag>.<ciphertext>`: under the key kept in `service_secrets` (values sealed before outside keys,
 *   and development or test without them). A copy of the database opens these; `admin secrets reseal` moves them.
 * Never returned, logged or audited.
 */
const encode = (parts: (string | Buffer)[]) => parts.map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');

function encrypt(key: Buffer, plain: string): Buffer[] {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
  return [iv, cipher.getAuthTag(), data];
}

function decrypt(key: Buffer, iv: string, tag: string, data: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
}

/** The id of the key that seals now: the newest outside key, or null (the database's key). */
export const sealingKeyId = (sealing: SealingConfig): string | null => sealing.keys.at(-1)?.id ?? null;

/** The id of the outside key a sealed value was sealed under; null for the database's key (v1). */
export function sealedUnder(sealed: string): string | null {
  return sealed.startsWith('v2.') ? (sealed.split('.')[1] ?? null) : null;
}

/** `plain` sealed under the newest outside key; without one, under the database's key (refused in production). */
export async function seal(q: Queryable, sealing: SealingConfig, plain: string): Promise<string> {
  const newest = sealing.keys.at(-1);
  if (newest) return encode(['v2', newest.id, ...encrypt(newest.key, plain)]);
  if (!sealing.databaseKeySeals) throw new Error('no sealing key: set SEALING_KEYS or SEALING_KEYS_FILE');
  const key = Buffer.from(await storedSecret(q, DATABASE_SEAL_SECRET, randomBytes(32).toString('base64url'), Date.now()), 'base64url');
  return encode(['v1', ...encrypt(key, plain)]);
}

/** The secret `seal` kept; throws when its key is not given (or gone from the database) or the value was altered. */
export async function unseal(q: Queryable, sealing: SealingConfig, sealed: string): Promise<string> {
  const parts = sealed.split('.');
  if (parts[0] === 'v2' && parts.length === 5) {
    const key = sealing.keys.find((k) => k.id === parts[1]);
    if (!key) throw new Error(`a sealed secret is under key ${parts[1]}, which SEALING_KEYS / SEALING_KEYS_FILE does not give`);
    return decrypt(key.key, parts[2]!, parts[3]!, parts[4]!);
  }
  if (parts[0] === 'v1' && parts.length === 4) {
    const stored = await existingSecret(q, DATABASE_SEAL_SECRET);
    if (!stored) throw new Error("a sealed secret is under the database's key, which is gone");
    return decrypt(Buffer.from(stored, 'base64url'), parts[1]!, parts[2]!, parts[3]!);
  }
  throw new Error('a sealed secret is malformed');
}

/** `sealed` under the newest outside key (unchanged when it already is); for the reseal verb. */
export async function resealed(q: Queryable, sealing: SealingConfig, sealed: string): Promise<string> {
  if (sealedUnder(sealed) === sealingKeyId(sealing)) return sealed;
  return seal(q, sealing, await unseal(q, sealing, sealed));
}
