import type { z } from 'zod';
import { agentLimitsConfig, agentLimitsEnv } from './agent-limits.js';
import { dashboardWorkConfig, dashboardWorkEnv } from './dashboard-work.js';
import { dashboardConfig, dashboardEnv } from './dashboard.js';
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
import { providerPollsConfig, providerPollsEnv } from './provider-polls.js';
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
  ...providerPollsEnv,
  ...dashboardWorkEnv,
  ...dashboardEnv,
} satisfies z.ZodRawShape;

/**
 * `env` is the whole parsed environment: an area may read a base setting too (mail identity reads MAIL_FROM).
 * Settings are nested by area, whatever file parses them (the environment's names never change): the inbound
 * listener's STARTTLS and sender checks under `inbound`; `nested` holds the parts of the areas whose other
 * settings src/config.ts builds, which it puts under `mail`, `agent` and `maintenance`.
 */
export function areasConfig(
  env: z.output<z.ZodObject<typeof areasEnv>> & { MAIL_FROM: string; MAINTENANCE_SWEEP_MS: number; NODE_ENV: string },
) {
  const { inboundTls, ...smtp } = mailTransportConfig(env);
  return {
    jobs: jobsConfig(env),
    /** The API's HTTP connection limits (docs/public-doors.md). */
    http: httpConfig(env),
    inbound: {
      ...inboundConfig(env),
      /** Which Authentication-Results are believed, and the DKIM/SPF/DMARC checks of the listener's mail. */
      auth: inboundAuthConfig(env),
      /** The listener offers STARTTLS with this certificate and key (PEM files); null: no STARTTLS. */
      tls: inboundTls,
    },
    links: linksConfig(env),
    workers: workersConfig(env),
    metrics: metricsConfig(env),
    /** OpenTelemetry traces (OTEL_*); null: off. */
    tracing: tracingConfig(env),
    /** How long each kind of history is kept (docs/decisions/retention.md). */
    retention: retentionConfig(env),
    /** Experiments the agent runs (docs/decisions/experiments.md). */
    experiments: experimentsConfig(env),
    nested: {
      /** `mail.smtp`: the relay's EHLO name and TLS (beside its host and port). */
      mailSmtp: smtp,
      /** `mail.identity`: which From domains an account may send as. */
      mailIdentity: mailIdentityConfig(env),
      /** `mail.failures`: how the relay's refusals of one recipient are judged. */
      mailFailures: mailFailuresConfig(env),
      /** `agent.limits`: what inbound events may cost the agent. */
      agentLimits: agentLimitsConfig(env),
      /** `maintenance.sweeps`: how often each sweep of the maintenance queue runs. */
      maintenanceSweeps: maintenanceSweepsConfig(env),
    },
    /** The provider-polls pool (PROVIDER_POLLS_CONCURRENCY). */
    providerPolls: providerPollsConfig(env),
    /** Durable events and their follow-ups (docs/architecture.md, "Events"). */
    events: eventsConfig(env),
    /** Keys that seal provider keys and DKIM private keys (docs/decisions/stores.md, "Sealing keys"). */
    sealing: sealingConfig(env),
    /** The dashboard's CSV import (`leadImports`) and live review stream (`liveUpdates`). */
    ...dashboardWorkConfig(env),
    /** The dashboard's sign-in, sessions and single-use links (docs/dashboard.md). */
    dashboard: dashboardConfig(env),
  };
}
