import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import { randomBase62 } from '../ids.js';
import { secretHash } from './secrets.js';

/** RFC 6238 with what every authenticator app reads: SHA-1, 6 digits, 30 s. */
const PERIOD = 30;

const totpOf = (base32: string, label = '', issuer = '') =>
  new TOTP({ issuer, label, algorithm: 'SHA1', digits: 6, period: PERIOD, secret: Secret.fromBase32(base32) });

/** A new secret (160 bits, base32) and what an app scans to add it. */
export async function newTotp(issuer: string, email: string): Promise<{ secret: string; otpauthUrl: string; qrSvg: string }> {
  const secret = new Secret({ size: 20 }).base32;
  const otpauthUrl = totpOf(secret, email, issuer).toString();
  const qrSvg = await QRCode.toString(otpauthUrl, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  return { secret, otpauthUrl, qrSvg };
}

/**
 * The time step a code belongs to when it is good now (one step either side, for clocks a little off), or
 * null. The caller records the step so the same code never signs in twice.
 */
export function totpStep(base32: string, code: string, now = Date.now()): number | null {
  const token = code.replace(/\s+/g, '');
  if (!/^\d{6}$/.test(token)) return null;
  const delta = totpOf(base32).validate({ token, timestamp: now, window: 1 });
  if (delta === null) return null;
  return Math.floor(now / 1000 / PERIOD) + delta;
}

/** The current code, for tests and the bench that sign in as a person would. */
export const totpCode = (base32: string, now = Date.now()): string => totpOf(base32).generate({ timestamp: now });

/** Ten recovery codes, `xxxxx-xxxxx` base62 (about 59 bits each), and their hashes to store. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: 10 }, () => {
    const r = randomBase62(10);
    return `${r.slice(0, 5)}-${r.slice(5)}`;
  });
  return { codes, hashes: codes.map(recoveryCodeHash) };
}

/** A recovery code as typed (spaces dropped, case kept: base62 is case-sensitive) to its stored hash. */
export const recoveryCodeHash = (code: string): string => secretHash(code.replace(/[\s-]+/g, ''));

/** Whether what was typed has a recovery code's shape (else it is taken for a TOTP code). */
export const looksLikeRecoveryCode = (code: string): boolean => /^[0-9A-Za-z]{5}-?[0-9A-Za-z]{5}$/.test(code.replace(/\s+/g, ''));
