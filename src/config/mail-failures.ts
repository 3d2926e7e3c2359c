import type { z } from 'zod';
import { int } from '../env-rules.js';

/** How the outbound relay's refusals of one recipient are judged (docs/decisions/mail-refusals.md). */
export const mailFailuresEnv = {
  MAIL_SOFT_FAILURES_BEFORE_BLOCK: int(5),
} satisfies z.ZodRawShape;

export function mailFailuresConfig(env: z.output<z.ZodObject<typeof mailFailuresEnv>>) {
  return {
    /**
     * The relay's 4xx answers at RCPT or DATA for one address, in a row (a send it takes starts the count
     * again), after which the address is treated as a hard bounce: blocked, counted, its card settled.
     */
    softFailuresBeforeBlock: env.MAIL_SOFT_FAILURES_BEFORE_BLOCK,
  };
}
