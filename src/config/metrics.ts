import { z } from 'zod';
import { int } from '../env-rules.js';

/** Settings of the /metrics endpoint every process kind serves (off unless METRICS_PORT is set). */
export const metricsEnv = {
  METRICS_PORT: z
    .string()
    .regex(/^\d+$/, 'must be a whole number (0 picks a free port)')
    .transform(Number)
    .refine((n) => n <= 65_535, 'must be at most 65535')
    .optional(),
  METRICS_HOST: z.string().min(1).optional(),
  METRICS_SAMPLE_SECONDS: int(15),
} satisfies z.ZodRawShape;

export function metricsConfig(env: z.output<z.ZodObject<typeof metricsEnv>>) {
  return {
    /** Port of the /metrics listener (never the API's); null: no listener, nothing sampled. 0 picks a free one. */
    port: env.METRICS_PORT ?? null,
    /** Loopback unless told: the endpoint has no login. */
    host: env.METRICS_HOST ?? '127.0.0.1',
    /** How often queue counts, the oldest lost send answer and Redis latency are sampled (never per scrape). */
    sampleMs: env.METRICS_SAMPLE_SECONDS * 1000,
  };
}
