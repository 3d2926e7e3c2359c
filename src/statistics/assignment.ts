/**
 * Which variant a contact gets: a keyed hash of the experiment and the contact, so the answer is the same
 * on every send, retry and reconciliation, needs nothing stored to be repeated, and one experiment's split
 * says nothing about another's. The caller still records it before the send (the record is what the
 * results count); this function is how the record is made.
 */
import { createHash } from 'node:crypto';

export const MIN_VARIANTS = 2;
export const MAX_VARIANTS = 4;
/** The variants' keys in plan order: A is the control, B to D the challengers. */
export const VARIANT_KEYS = ['A', 'B', 'C', 'D'] as const;

/** A contact's key as hashed: trimmed and lower-cased, so `Jane@Acme.test ` and `jane@acme.test` are one contact. */
export function normaliseContact(contact: string): string {
  return contact.normalize('NFKC').trim().toLowerCase();
}

/**
 * The variant index (0 … variants − 1) of `contact` in experiment `experimentId`: the first 48 bits of
 * SHA-256(experimentId, NUL, normalised contact) as a fraction of 2^48, times the number of variants. The
 * NUL keeps ("ab", "c") apart from ("a", "bc"); 48 bits make the split uniform to within 2^-48 and fit a
 * double exactly.
 */
export function assignVariant(experimentId: string, contact: string, variants: number): number {
  if (!Number.isInteger(variants) || variants < MIN_VARIANTS || variants > MAX_VARIANTS) {
    throw new RangeError(`an experiment has ${MIN_VARIANTS} to ${MAX_VARIANTS} variants, got ${variants}`);
  }
  const digest = createHash('sha256').update(experimentId).update('\0').update(normaliseContact(contact)).digest();
  return Math.floor((digest.readUIntBE(0, 6) / 2 ** 48) * variants);
}
