import { z } from 'zod';
import { optionalUrlWithScheme } from '../env-rules.js';

/**
 * OpenTelemetry traces, read from the standard `OTEL_*` variables (docs/decisions/tracing.md): off unless an
 * OTLP endpoint is set, and off whenever OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The spans go
 * out over OTLP/HTTP as JSON; the exporter itself reads OTEL_EXPORTER_OTLP_HEADERS and its timeouts, and
 * the batch processor OTEL_BSP_*.
 */
export const tracingEnv = {
  OTEL_SDK_DISABLED: z
    .string()
    .optional()
    .transform((v) => v?.trim().toLowerCase() === 'true'),
  OTEL_TRACES_EXPORTER: z
    .string()
    .optional()
    .transform((v) => v?.trim().toLowerCase() || 'otlp')
    .refine((v) => v === 'otlp' || v === 'none', 'must be otlp or none'),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrlWithScheme(['http:', 'https:']),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalUrlWithScheme(['http:', 'https:']),
  OTEL_EXPORTER_OTLP_PROTOCOL: z.literal('http/json', 'must be http/json (spans are sent as OTLP/HTTP JSON)').optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.literal('http/json', 'must be http/json (spans are sent as OTLP/HTTP JSON)').optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
} satisfies z.ZodRawShape;

export function tracingConfig(env: z.output<z.ZodObject<typeof tracingEnv>>) {
  // The signal's own endpoint is used as given; the general one gets the traces path (the OTLP rule).
  const url =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : null);
  if (!url || env.OTEL_SDK_DISABLED || env.OTEL_TRACES_EXPORTER === 'none') return null;
  return {
    /** Where spans are POSTed (OTLP/HTTP, JSON). */
    url,
    /** OTEL_SERVICE_NAME; null: the process kind's name (growth-agent-api, -workers, -inbound). */
    serviceName: env.OTEL_SERVICE_NAME ?? null,
  };
}
