import type { z } from 'zod';
import { agentLimitsConfig, agentLimitsEnv } from './agent-limits.js';
import { eventsConfig, eventsEnv } from './events.js';
import { experimentsConfig, experimentsEnv } from './experiments.js';
import { httpConfig, httpEnv } from './http.js';
import { inboundAuthConfig, inboundAuthEnv } from './inbound-auth.js';
import { inboundConfig, inboundEnv } from './inbound.js';
import { jobsConfig, jobsEnv } from './jobs.js';
import { linksConfig, linksEnv } from './links.js';
import { maintenanceSweepsConfig, maintenanceSweepsEnv } from './maintenance-sweeps.js';
import { mailFailuresConfig, mailFailuresEnv } from './mail-failures.js';
import { mailIdentityConfig, mailIdentityEnv } from './mail-identity.js';
import { mailTransportConfig, mailTransportEnv } from './mail-transport.js';
import { metricsConfig, metricsEnv } from './metrics.js';
import { retentionConfig, retentionEnv } from './retention.js';
import { sealingConfig, sealingEnv } from './sealing.js';
import { tracingConfig, tracingEnv } from './tracing.js';
import { workersConfig, workersEnv } from './workers.js';

/**
 * The settings of each area kept in a file of its own (src/config/<area>.ts: a zod shape spread into the
 * environment's schema, and a builder of the area's part of Config). A new area adds its two names here.
 */
export const areasEnv = {
  ...jobsEnv,
  ...httpEnv,
  ...inboundEnv,
  ...inboundAuthEnv,
  ...agentLimitsEnv,
  ...linksEnv,
  ...mailFailuresEnv,
  ...mailIdentityEnv,
  ...mailTransportEnv,
  ...workersEnv,
  ...metricsEnv,
  ...tracingEnv,
  ...retentionEnv,
  ...experimentsEnv,
  ...maintenanceSweepsEnv,
  ...eventsEnv,
  ...sealingEnv,
} satisfies z.ZodRawShape;

/** `env` is the whole parsed environment: an area may read a base setting too (mail transport reads MAIL_FROM). */
export function areasConfig(
  env: z.output<z.ZodObject<typeof areasEnv>> & { MAIL_FROM: string; MAINTENANCE_SWEEP_MS: number; NODE_ENV: string },
) {
  return {
    jobs: jobsConfig(env),
    /** The API's HTTP connection limits (docs/public-doors.md). */
    http: httpConfig(env),
    inbound: inboundConfig(env),
    inboundAuth: inboundAuthConfig(env),
    agentLimits: agentLimitsConfig(env),
    links: linksConfig(env),
    mailFailures: mailFailuresConfig(env),
    mailIdentity: mailIdentityConfig(env),
    mailTransport: mailTransportConfig(env),
    workers: workersConfig(env),
    metrics: metricsConfig(env),
    /** OpenTelemetry traces (OTEL_*); null: off. */
    tracing: tracingConfig(env),
    /** How long each kind of history is kept (docs/decisions/retention.md). */
    retention: retentionConfig(env),
    /** Experiments the agent runs (docs/decisions/experiments.md). */
    experiments: experimentsConfig(env),
    /** How often each sweep of the maintenance queue runs (MAINTENANCE_<AREA>_SWEEP_MS, else MAINTENANCE_SWEEP_MS). */
    maintenanceSweeps: maintenanceSweepsConfig(env),
    /** Durable events and their follow-ups (docs/architecture.md, "Events"). */
    events: eventsConfig(env),
    /** Keys that seal provider keys and DKIM private keys (docs/decisions/stores.md, "Sealing keys"). */
    sealing: sealingConfig(env),
  };
}
