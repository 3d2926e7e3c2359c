import { z } from 'zod';

/** Whole-number environment variable with a default, refused when it is not a positive integer. */
export const int = (fallback: number, min = 1) =>
  z
    .string()
    .regex(/^\d+$/, `must be a whole number (at least ${min})`)
    .transform(Number)
    .refine((n) => n >= min, `must be at least ${min}`)
    .optional()
    .transform((n) => n ?? fallback);

const hasScheme = (schemes: string[]) => (s: string) => {
  try {
    return schemes.includes(new URL(s).protocol);
  } catch {
    return false;
  }
};
const schemeMessage = (schemes: string[]) => `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}`;

export const urlWithScheme = (schemes: string[], fallback: string) =>
  z
    .string()
    .optional()
    .transform((s) => s ?? fallback)
    .refine(hasScheme(schemes), schemeMessage(schemes));

/** A URL with one of the schemes, or undefined when unset. */
export const optionalUrlWithScheme = (schemes: string[]) => z.string().refine(hasScheme(schemes), schemeMessage(schemes)).optional();
