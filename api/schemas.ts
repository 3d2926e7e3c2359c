import { z } from 'zod';

/** The one error body: `{ error, ...extra }`. */
export const ErrorBody = z
  .object({
    error: z.string(),
    requiredScope: z.string().optional(),
    actions: z.array(z.string()).optional(),
    message: z.string().optional(),
  })
  .passthrough()
  .meta({ id: 'Error' });

/** Marks a refinement whose rule the spec answers with 409 `rejected`, not 400: `.refine(f, { message, params: REFUSAL })`. */
export const REFUSAL = { status: 409 } as const;

/**
 * Query integer with the spec's wording: `limit must be an integer from 1 to 100`. It arrives as text
 * and is read as digits; /openapi.json declares it an integer (so typed clients pass `limit: 10`).
 */
export function queryInt(min: number, max: number, fallback?: number) {
  const rule = `must be an integer from ${min} to ${max}`;
  return z
    .string({ error: rule })
    .regex(/^-?\d+$/, rule)
    .transform(Number)
    .pipe(z.number().int(rule).min(min, rule).max(max, rule))
    .optional()
    .transform((v) => v ?? fallback)
    .meta({ type: 'integer', minimum: min, maximum: max, ...(fallback === undefined ? {} : { default: fallback }) });
}

/** Path id: any non-empty string; unknown ids are 404s, never 400s. */
export const IdParams = z.object({ id: z.string().min(1) });

/**
 * A byte bound in /openapi.json: `maxLength` n (no character is under one UTF-8 byte, so no longer text is taken)
 * and the exact rule as `x-max-utf8-bytes` n, which a client's validator applies as a keyword of its own. A
 * `maxLength` of n / 4 would refuse plain text the service takes, which a generated client must never do.
 */
export const utf8Bound = (n: number) => ({ maxLength: n, 'x-max-utf8-bytes': n });

/** Not empty or only whitespace: what `trim()` leaves is not empty (JavaScript's `\s` is exactly what it removes). */
export const NOT_BLANK = { pattern: '\\S' };

/** JSON Schema's `if`/`then`: a rule between fields, stated in /openapi.json with `.meta({ allOf: [when(…)] })`. */
export const when = (condition: object, rule: object) => ({
  if: condition,
  // biome-ignore lint/suspicious/noThenProperty: JSON Schema's keyword, not a thenable.
  then: rule,
});
