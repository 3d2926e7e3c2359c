import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random base62 string of `length` characters, from a CSPRNG, without modulo bias. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
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
