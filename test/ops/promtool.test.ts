import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { PROMTOOL, ensurePrometheus, startPrometheus, type PrometheusServer } from '../helpers/prometheus.js';
import { ROOT, run } from '../helpers/processes.js';
import { defaultMetrics } from './catalog.js';
import { nameProblems } from './promql-names.js';

/**
 * The shipped alert rules, scrape config and dashboard (ops/): promtool checks and unit-tests them, every
 * query names only catalog metrics and labels, and every query parses in a real Prometheus.
 */
interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}
interface RuleTest {
  alert_rule_test: { alertname: string; exp_alerts: unknown[] }[];
}
interface Panel {
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const rules: Rule[] = (parse(read('ops/prometheus/alerts.yml')) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const ruleTests: RuleTest[] = (parse(read('ops/prometheus/alerts.test.yml')) as { tests: RuleTest[] }).tests;
const dashboard = JSON.parse(read('ops/grafana/growth-agent.json')) as { uid: string; panels: Panel[] };
const panels = dashboard.panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
/** Grafana's interval variables, as a query would see them. */
const grafanaExpr = (expr: string) => expr.replaceAll('$__rate_interval', '1m').replaceAll('$__range', '1h');

beforeAll(() => ensurePrometheus());

describe('promtool on the shipped files', () => {
  it('checks the alert rules', async () => {
    const out = await run(PROMTOOL, ['check', 'rules', 'ops/prometheus/alerts.yml'], {});
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('checks the example scrape config, which loads the alert rules', async () => {
    const out = await run(PROMTOOL, ['check', 'config', 'ops/prometheus/prometheus.yml'], {});
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toContain('SUCCESS: 1 rule files found');
    expect(out.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
  });

  it('passes the alert unit tests', async () => {
    const out = await run(PROMTOOL, ['test', 'rules', 'ops/prometheus/alerts.test.yml'], {});
    expect(out.code, out.stdout + out.stderr).toBe(0);
    expect(out.stdout).toContain('SUCCESS');
  });
});

describe('the alert rules', () => {
  it('are the ones the runbook covers, each with a severity, a summary, a description and its runbook paragraph', () => {
    const runbook = read('docs/operations.md');
    const anchors = new Set(
      [...runbook.matchAll(/^#{2,4} (.+)$/gm)].map((m) =>
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 -]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    expect(rules.map((r) => r.alert).sort()).toEqual([
      'GasAgentTurnsStalled',
      'GasDeliveryPendingStuck',
      'GasInboundRefusalsSpiking',
      'GasJobsFailing',
      'GasLlmBudgetExhausted',
      'GasLlmErrorRate',
      'GasMetricsTargetDown',
      'GasPgPoolSaturated',
      'GasQueueBacklogGrowing',
      'GasQueueBacklogHigh',
    ]);
    for (const r of rules) {
      expect(['page', 'ticket'], r.alert).toContain(r.labels.severity);
      expect(r.annotations.summary, r.alert).toBeTruthy();
      expect(r.annotations.description, r.alert).toBeTruthy();
      expect(r.annotations.runbook_url, r.alert).toBe(`docs/operations.md#${r.alert.toLowerCase()}`);
      expect(anchors.has(r.alert.toLowerCase()), `docs/operations.md has a heading ${r.alert}`).toBe(true);
    }
  });

  it('each fire in a unit test and stay quiet in another', () => {
    for (const { alert } of rules) {
      const evals = ruleTests.flatMap((t) => t.alert_rule_test).filter((e) => e.alertname === alert);
      expect(
        evals.some((e) => e.exp_alerts.length > 0),
        `${alert} fires in alerts.test.yml`,
      ).toBe(true);
      expect(
        evals.some((e) => e.exp_alerts.length === 0),
        `${alert} stays quiet in alerts.test.yml`,
      ).toBe(true);
    }
  });

  it('name only catalog metrics and their labels', async () => {
    const extra = await defaultMetrics();
    expect(rules.flatMap((r) => nameProblems(r.expr, extra))).toEqual([]);
  });
});

describe('the name check itself', () => {
  it('finds an unknown metric, a label the metric lacks, the raw histogram name and grouping by an unknown label', () => {
    expect(nameProblems('sum(rate(gas_mails_total[5m]))', {})).toEqual([
      'sum(rate(gas_mails_total[5m])): gas_mails_total is not in the catalog',
    ]);
    expect(nameProblems('gas_sends_total{account="a"}', {})).toEqual([
      'gas_sends_total{account="a"}: gas_sends_total has no label account',
    ]);
    expect(nameProblems('gas_job_duration_seconds', {})).toHaveLength(1);
    expect(nameProblems('sum by (brain) (gas_sends_total)', {})).toEqual([
      'sum by (brain) (gas_sends_total): groups by brain, which no metric there carries',
    ]);
    // The job histogram's `job` label arrives as `exported_job`; `job` is the scrape target's.
    expect(nameProblems('sum by (exported_job, job) (rate(gas_job_duration_seconds_count{outcome="failed"}[5m]))', {})).toEqual([]);
    // A counter has no buckets.
    expect(nameProblems('sum by (le) (rate(gas_sends_total_bucket[5m]))', {})).toEqual([
      'sum by (le) (rate(gas_sends_total_bucket[5m])): gas_sends_total_bucket is not in the catalog',
      'sum by (le) (rate(gas_sends_total_bucket[5m])): groups by le, which no metric there carries',
    ]);
  });
});

describe('the dashboard', () => {
  it('parses, and every panel queries only catalog metrics and their labels', async () => {
    expect(dashboard.uid).toBe('gas-growth-agent');
    expect(panels.length).toBeGreaterThanOrEqual(20);
    const extra = await defaultMetrics();
    for (const p of panels) expect(p.targets?.length, `${p.title} has a query`).toBeGreaterThan(0);
    expect(panels.flatMap((p) => (p.targets ?? []).flatMap((t) => nameProblems(grafanaExpr(t.expr), extra)))).toEqual([]);
  });

  it('covers requests, queues, job failures, sends, inbound mail, turns, LLM calls and the pool', () => {
    const exprs = panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)).join('\n');
    for (const metric of [
      'gas_http_request_duration_seconds_count',
      'gas_http_request_duration_seconds_bucket',
      'gas_queue_jobs',
      'gas_job_duration_seconds_count',
      'gas_sends_total',
      'gas_delivery_pending_oldest_seconds',
      'gas_inbound_mail_total',
      'gas_public_door_requests_total',
      'gas_agent_turns_total',
      'gas_llm_calls_total',
      'gas_llm_budget_refusals_total',
      'gas_pg_pool_connections',
    ]) {
      expect(exprs, metric).toContain(metric);
    }
  });
});

describe('every shipped query in a real Prometheus', () => {
  let prom: PrometheusServer;
  beforeAll(async () => {
    prom = await startPrometheus([]);
  });
  afterAll(async () => {
    await prom?.stop();
  });

  it('parses and evaluates (no series yet: each answers an empty vector)', async () => {
    const exprs = [...rules.map((r) => r.expr), ...panels.flatMap((p) => (p.targets ?? []).map((t) => grafanaExpr(t.expr)))];
    for (const expr of exprs) expect(await prom.query(expr), expr).toEqual([]);
  });
});
