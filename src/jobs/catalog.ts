import { agentTurnsQueue } from './agent-turns.js';
import { cardTimersQueue } from './card-timers.js';
import type { JobDef } from './contract.js';
import { inboundMailQueue } from './inbound-mail.js';
import { shipmentsQueue } from './shipments.js';
import { maintenanceQueue } from './maintenance.js';
import { providerPollsQueue } from './provider-polls.js';
import { webhookEventsQueue } from './webhook-events.js';
import { workflowRunsQueue } from './workflow-runs.js';

/**
 * The job catalog: one file per queue (src/jobs/<queue>.ts) declares that queue's jobs, their keys and
 * their repeat intervals; every queue is one worker pool (workers/<queue>.ts), in the order operators
 * list them. A new job goes into its queue's file and its `defineQueue`; a new queue adds its file here.
 */
export const CATALOG = [
  agentTurnsQueue,
  shipmentsQueue,
  cardTimersQueue,
  webhookEventsQueue,
  workflowRunsQueue,
  maintenanceQueue,
  inboundMailQueue,
  providerPollsQueue,
] as const;

/** Every worker pool is one BullMQ queue; the names are the pool names operators pass to --pools. */
export type QueueName = (typeof CATALOG)[number]['name'];
export const QUEUES: readonly QueueName[] = CATALOG.map((q) => q.name);

/**
 * The names renamed queues had in the release before, each with its queue's name now. For one release a
 * process opens them too (its pool drains them, the metrics show their depth) and `--pools` takes them
 * for the new name; the next release removes them (docs/decisions/jobs.md, "Renamed queues").
 */
export const FORMER_QUEUES: ReadonlyMap<string, QueueName> = new Map(
  CATALOG.flatMap((q): [string, QueueName][] => ('formerly' in q && q.formerly ? [[q.formerly, q.name]] : [])),
);

/** Every job the pools run. */
export const JOBS: JobDef[] = CATALOG.flatMap((q): JobDef[] => Object.values(q.jobs));
