import { createHash, timingSafeEqual } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { randomBase62, toBase62 } from '../ids.js';

const RANDOM_LENGTH = 30;
const CHECKSUM_LENGTH = 6;

function checksum(prefix: string, random: string): string {
  return toBase62(crc32(`${prefix}_${random}`), CHECKSUM_LENGTH);
}

/**
 * A personal token: `<prefix>_<30 random base62><6 base62 CRC32 of what precedes>` (GitHub's layout),
 * so a truncated or mistyped token is refused without a lookup and secret scanners can match it.
 */
export function generateToken(prefix: string): string {
  const random = randomBase62(RANDOM_LENGTH);
  return `${prefix}_${random}${checksum(prefix, random)}`;
}

/** Shape and checksum only; whether the token is live is the database's answer. */
export function isWellFormedToken(prefix: string, token: string): boolean {
  if (token.length !== prefix.length + 1 + RANDOM_LENGTH + CHECKSUM_LENGTH) return false;
  if (!token.startsWith(`${prefix}_`)) return false;
  const body = token.slice(prefix.length + 1);
  if (!/^[0-9A-Za-z]+$/.test(body)) return false;
  const expected = Buffer.from(checksum(prefix, body.slice(0, RANDOM_LENGTH)));
  return timingSafeEqual(expected, Buffer.from(body.slice(RANDOM_LENGTH)));
}

/** What is stored: the SHA-256 of the whole token, hex. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
