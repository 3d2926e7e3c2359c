import client from 'prom-client';

/**
 * The metric catalog every process exposes (docs/operations.md, "Metrics"): name, type and label names.
 * The shipped alert rules and dashboard may name only these (test/ops/promtool.test.ts), so a renamed metric
 * or label fails here rather than leaving a panel empty or an alert silent.
 */
export const CATALOG: Record<string, { type: 'counter' | 'gauge' | 'histogram'; labels: string[] }> = {
  gas_http_request_duration_seconds: { type: 'histogram', labels: ['method', 'route', 'status'] },
  gas_rate_limit_refusals_total: { type: 'counter', labels: ['bucket'] },
  gas_webhook_deliveries_total: { type: 'counter', labels: ['outcome'] },
  gas_public_door_requests_total: { type: 'counter', labels: ['door', 'outcome'] },
  gas_queue_jobs: { type: 'gauge', labels: ['queue', 'state'] },
  gas_job_duration_seconds: { type: 'histogram', labels: ['queue', 'job', 'outcome'] },
  gas_jobs_stalled_total: { type: 'counter', labels: ['queue'] },
  gas_job_retries_total: { type: 'counter', labels: ['queue', 'job'] },
  gas_cards_created_total: { type: 'counter', labels: ['kind'] },
  gas_cards_decided_total: { type: 'counter', labels: ['kind', 'decider'] },
  gas_sends_total: { type: 'counter', labels: ['channel', 'outcome'] },
  gas_delivery_pending_oldest_seconds: { type: 'gauge', labels: [] },
  gas_inbound_mail_total: { type: 'counter', labels: ['class'] },
  gas_agent_turns_total: { type: 'counter', labels: ['outcome', 'brain'] },
  gas_llm_calls_total: { type: 'counter', labels: ['model', 'outcome'] },
  gas_llm_tokens_total: { type: 'counter', labels: ['model', 'kind'] },
  gas_llm_call_duration_seconds: { type: 'histogram', labels: ['model'] },
  gas_llm_budget_refusals_total: { type: 'counter', labels: [] },
  gas_workflow_runs_total: { type: 'counter', labels: ['outcome'] },
  gas_pg_pool_connections: { type: 'gauge', labels: ['state'] },
  gas_redis_command_duration_seconds: { type: 'histogram', labels: ['role'] },
};

/** prom-client's default metrics under the `gas_` prefix (heap, event-loop lag, ...), as the processes register them. */
export async function defaultMetrics(): Promise<Record<string, { type: string; labels: string[] }>> {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'gas_' });
  const out: Record<string, { type: string; labels: string[] }> = {};
  for (const m of await registry.getMetricsAsJSON()) {
    const labels = new Set<string>();
    for (const v of m.values) for (const l of Object.keys(v.labels)) if (l !== 'le') labels.add(l);
    out[m.name] = { type: String(m.type), labels: [...labels] };
  }
  return out;
}
