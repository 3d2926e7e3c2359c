import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { BoundHistogram } from './bound-histogram.js';

/**
 * The process's one metric registry and the catalog every process kind exposes on /metrics
 * (docs/decisions/metrics.md). Metrics are module-level singletons: domain code counts through them
 * (`metrics.sends.inc({ channel, outcome })`) without being handed anything. No label carries an
 * account id, token, address, path with ids or other unbounded value: every label below takes its
 * values from a fixed list (route templates, queue and job names, outcomes, kinds, model names).
 */
export const registry = new Registry();

const SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const JOB_SECONDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 30, 60, 300];
const LLM_SECONDS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const registers = [registry];

export const metrics = {
  // On every request: its series are bound once (api/middleware/http-metrics.ts), an observe is a few additions.
  httpDuration: new BoundHistogram(
    'gas_http_request_duration_seconds',
    'API request duration by route template (or `unmatched`) and status',
    ['method', 'route', 'status'] as const,
    SECONDS,
    registers,
  ),
  rateLimitRefusals: new Counter({
    name: 'gas_rate_limit_refusals_total',
    help: 'Requests the rate limiter refused, by bucket',
    labelNames: ['bucket'] as const,
    registers,
  }),
  webhookDeliveries: new Counter({
    name: 'gas_webhook_deliveries_total',
    help: 'Webhook deliveries received, by outcome',
    labelNames: ['outcome'] as const,
    registers,
  }),
  publicDoor: new Counter({
    name: 'gas_public_door_requests_total',
    help: 'Requests to the public doors (one-click unsubscribe, tracked links, inbound URL, SMTP), by outcome',
    labelNames: ['door', 'outcome'] as const,
    registers,
  }),
  queueJobs: new Gauge({
    name: 'gas_queue_jobs',
    help: "Jobs per queue and state (BullMQ's counts, sampled on a timer)",
    labelNames: ['queue', 'state'] as const,
    registers,
  }),
  jobDuration: new Histogram({
    name: 'gas_job_duration_seconds',
    help: 'Job run time by queue, job name and outcome',
    labelNames: ['queue', 'job', 'outcome'] as const,
    buckets: JOB_SECONDS,
    registers,
  }),
  jobsStalled: new Counter({
    name: 'gas_jobs_stalled_total',
    help: 'Jobs found stalled (their worker lost the lock), by queue',
    labelNames: ['queue'] as const,
    registers,
  }),
  jobRetries: new Counter({
    name: 'gas_job_retries_total',
    help: 'Failed job attempts that will be tried again, by queue and job name',
    labelNames: ['queue', 'job'] as const,
    registers,
  }),
  cardsCreated: new Counter({
    name: 'gas_cards_created_total',
    help: 'Review cards created, by kind',
    labelNames: ['kind'] as const,
    registers,
  }),
  cardsDecided: new Counter({
    name: 'gas_cards_decided_total',
    help: 'Review cards decided, by kind and decider',
    labelNames: ['kind', 'decider'] as const,
    registers,
  }),
  sends: new Counter({
    name: 'gas_sends_total',
    help: 'Sends settled, by channel and outcome',
    labelNames: ['channel', 'outcome'] as const,
    registers,
  }),
  deliveryPendingOldest: new Gauge({
    name: 'gas_delivery_pending_oldest_seconds',
    help: 'Age of the oldest send whose provider answer is lost (0 when none; sampled on a timer)',
    registers,
  }),
  inboundMail: new Counter({
    name: 'gas_inbound_mail_total',
    help: 'Inbound mail settled, by class',
    labelNames: ['class'] as const,
    registers,
  }),
  agentTurns: new Counter({
    name: 'gas_agent_turns_total',
    help: 'Agent turns finished, by outcome and brain',
    labelNames: ['outcome', 'brain'] as const,
    registers,
  }),
  llmCalls: new Counter({
    name: 'gas_llm_calls_total',
    help: 'LLM calls, by model and outcome',
    labelNames: ['model', 'outcome'] as const,
    registers,
  }),
  llmTokens: new Counter({
    name: 'gas_llm_tokens_total',
    help: "LLM tokens from the responses' usage, by model and kind",
    labelNames: ['model', 'kind'] as const,
    registers,
  }),
  llmDuration: new Histogram({
    name: 'gas_llm_call_duration_seconds',
    help: 'LLM call latency by model',
    labelNames: ['model'] as const,
    buckets: LLM_SECONDS,
    registers,
  }),
  llmBudgetRefusals: new Counter({
    name: 'gas_llm_budget_refusals_total',
    help: 'LLM calls refused because the model budget was spent',
    registers,
  }),
  workflowRuns: new Counter({
    name: 'gas_workflow_runs_total',
    help: 'Workflow runs finished, by outcome',
    labelNames: ['outcome'] as const,
    registers,
  }),
  pgPool: new Gauge({
    name: 'gas_pg_pool_connections',
    help: 'Postgres pool connections: used, free, and acquires waiting',
    labelNames: ['state'] as const,
    registers,
    collect() {
      const pool = poolSource?.();
      if (!pool) return;
      this.set({ state: 'used' }, pool.numUsed());
      this.set({ state: 'free' }, pool.numFree());
      this.set({ state: 'pending' }, pool.numPendingAcquires());
    },
  }),
  redisDuration: new Histogram({
    name: 'gas_redis_command_duration_seconds',
    help: 'Redis round-trip time by connection role (measured by the sampler)',
    labelNames: ['role'] as const,
    buckets: SECONDS,
    registers,
  }),
};

/** What knex's pool (tarn) tells about its connections. */
export interface PoolCounts {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

let poolSource: (() => PoolCounts | undefined) | undefined;

/** The Postgres pool read at each scrape (in memory, no query). */
export function watchPool(source: () => PoolCounts | undefined): void {
  poolSource = source;
}

let defaults = false;

/** prom-client's process metrics (heap, event-loop lag, GC, …) with the `gas_` prefix; once per process. */
export function collectProcessMetrics(): void {
  if (defaults) return;
  defaults = true;
  collectDefaultMetrics({ register: registry, prefix: 'gas_' });
}

const WORD = /^[a-z][a-z0-9_.-]{0,47}$/;

/** A label value from code (a kind, a decider, a class): as it is when it is a plain word, else `other`. */
export const word = (value: unknown): string => (typeof value === 'string' && WORD.test(value) ? value : 'other');
