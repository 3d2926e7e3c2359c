import type { z } from 'zod';
import { int } from '../env-rules.js';

/** The provider polls' pool (the professional network's and the ad platform's event feeds). */
export const providerPollsEnv = {
  PROVIDER_POLLS_CONCURRENCY: int(8),
} satisfies z.ZodRawShape;

export function providerPollsConfig(env: z.output<z.ZodObject<typeof providerPollsEnv>>) {
  return {
    /** `provider-polls` jobs (one account's page of events, the poll sweep) one worker process runs at once. */
    concurrency: env.PROVIDER_POLLS_CONCURRENCY,
  };
}
