import { createHash, timingSafeEqual } from 'node:crypto';
import { randomBase62 } from '../ids.js';

/** A new random secret for a cookie or a single-use link: 43 base62 characters, about 256 bits. */
export const newSecret = (): string => randomBase62(43);

/** What is stored of a secret: its SHA-256, hex. The secret itself never is. */
export const secretHash = (secret: string): string => createHash('sha256').update(secret).digest('hex');

/** Compares two strings in time that does not depend on where they differ. */
export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
