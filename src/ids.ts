import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * CSPRNG bytes drawn from a pool filled 4 KiB at a time, as Node does for randomUUID: one call into
 * the generator per hundred ids instead of one per id (that call was ~15 µs of every webhook POST).
 * Every byte is handed out once.
 */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = 0;

function pooledRandomBytes(n: number): Buffer {
  if (poolOffset + n > pool.length) {
    pool = randomBytes(Math.max(POOL_SIZE, n));
    poolOffset = 0;
  }
  const out = pool.subarray(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

/** Random base62 string of `length` characters, from a CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of pooledRandomBytes(length * 2)) {
      if (byte < 248) out += ALPHABET[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

/** Fixed-width base62 rendering of a non-negative integer. */
export function toBase62(value: number, width: number): string {
  let n = value;
  let out = '';
  do {
    out = ALPHABET[n % 62] + out;
    n = Math.floor(n / 62);
  } while (n > 0);
  return out.padStart(width, '0');
}

/** Stripe-style identifier: `acct_3xZ…`. Ids carry no `:` so they are safe inside BullMQ job ids. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBase62(20)}`;
}
