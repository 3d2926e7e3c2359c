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

export const urlWithScheme = (schemes: string[], fallback: string) =>
  z
    .string()
    .optional()
    .transform((s) => s ?? fallback)
    .refine(
      (s) => {
        try {
          return schemes.includes(new URL(s).protocol);
        } catch {
          return false;
        }
      },
      `must be a URL starting with ${schemes.map((s) => `${s}//`).join(' or ')}`,
    );
