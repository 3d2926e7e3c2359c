import type { z } from 'zod';
import { optionalInt } from '../env-rules.js';

/**
 * How often each sweep of the `maintenance` queue runs (src/jobs/maintenance.ts). Each has a setting of
 * its own; one left unset runs every MAINTENANCE_SWEEP_MS, the single interval all of them shared before
 * they were split, so a configuration written for the single sweep keeps its meaning.
 */
export const maintenanceSweepsEnv = {
  MAINTENANCE_TURNS_SWEEP_MS: optionalInt(),
  MAINTENANCE_WORKFLOW_SCHEDULERS_SWEEP_MS: optionalInt(),
  MAINTENANCE_WORKFLOW_RUNS_SWEEP_MS: optionalInt(),
  MAINTENANCE_WEBHOOK_DELIVERIES_SWEEP_MS: optionalInt(),
  MAINTENANCE_CONVERSIONS_SWEEP_MS: optionalInt(),
  MAINTENANCE_ROLLUPS_SWEEP_MS: optionalInt(),
  MAINTENANCE_RETENTION_SWEEP_MS: optionalInt(),
  MAINTENANCE_EXPERIMENTS_SWEEP_MS: optionalInt(),
  MAINTENANCE_EVENTS_SWEEP_MS: optionalInt(),
  MAINTENANCE_LEAD_IMPORTS_SWEEP_MS: optionalInt(),
} satisfies z.ZodRawShape;

export function maintenanceSweepsConfig(env: z.output<z.ZodObject<typeof maintenanceSweepsEnv>> & { MAINTENANCE_SWEEP_MS: number }) {
  const every = (ms: number | undefined) => ms ?? env.MAINTENANCE_SWEEP_MS;
  return {
    turns: every(env.MAINTENANCE_TURNS_SWEEP_MS),
    workflowSchedulers: every(env.MAINTENANCE_WORKFLOW_SCHEDULERS_SWEEP_MS),
    workflowRuns: every(env.MAINTENANCE_WORKFLOW_RUNS_SWEEP_MS),
    webhookDeliveries: every(env.MAINTENANCE_WEBHOOK_DELIVERIES_SWEEP_MS),
    conversions: every(env.MAINTENANCE_CONVERSIONS_SWEEP_MS),
    rollups: every(env.MAINTENANCE_ROLLUPS_SWEEP_MS),
    retention: every(env.MAINTENANCE_RETENTION_SWEEP_MS),
    experiments: every(env.MAINTENANCE_EXPERIMENTS_SWEEP_MS),
    events: every(env.MAINTENANCE_EVENTS_SWEEP_MS),
    leadImports: every(env.MAINTENANCE_LEAD_IMPORTS_SWEEP_MS),
  };
}
