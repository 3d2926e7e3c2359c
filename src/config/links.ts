import type { z } from 'zod';

/** Limits of the public tracked-link door (/l/{code}). */
export const linksEnv = {} satisfies z.ZodRawShape;

export function linksConfig(_env: object) {
  return {};
}
