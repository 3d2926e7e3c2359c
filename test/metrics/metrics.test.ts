import { afterAll, beforeAll, describe, expect } from 'vitest';
import { cardSweep } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import { OPEN_QUEUES } from '../../src/jobs/registry.js';
import { startMetrics } from '../../src/metrics/server.js';
import { createLogger } from '../../src/logger.js';
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { freePort, until } from '../helpers/processes.js';
import { ensurePrometheus, startPrometheus, type PrometheusServer } from '../helpers/prometheus.js';
import { rawMessage, smtpSend } from '../helpers/smtp-client.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { metricsPort, scrape, sampleValue, type Sample } from './scrape.js';
import { auth } from '../helpers/auth.js';

/**
 * /metrics of real processes: an API process and a worker process started by the test, each on a
 * metrics port of its own (METRICS_PORT=0, the bound port read from its log line), scraped over HTTP.
 */
const SLOW = 180_000;
const procs: ServiceProcess[] = [];
let apiPort = 0;
let apiMetrics = 0;
let workerMetrics = 0;

it.beforeAll(async ({ env, smtp }) => {
  const base = {
    ...envFor(env.config),
    ...smtpEnv(smtp),
    MAIL_FROM: 'agent@growthco.example',
    LOG_LEVEL: 'info',
    METRICS_PORT: '0',
    METRICS_SAMPLE_SECONDS: '1',
  };
  const api = startService(['api'], { ...base, PORT: '0' });
  const worker = startService(['workers', '--pools', 'card-timers'], base);
  procs.push(api, worker);
  try {
    [apiPort, apiMetrics, workerMetrics] = await Promise.all([api.port(90_000), metricsPort(api), metricsPort(worker)]);
  } catch (err) {
    throw new Error(`${(err as Error).message}\napi: ${api.output().slice(-2000)}\nworker: ${worker.output().slice(-2000)}`);
  }
}, SLOW);

afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
});

const call = (path: string, token?: string, method = 'GET') =>
  fetch(`http://127.0.0.1:${apiPort}${path}`, {
    method,
    headers: {
      ...(token ? auth(token) : {}),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { body: '{}' } : {}),
  });

async function mailCard(env: TestEnv, accountId: string, subject: string) {
  return buildCard(env.deps.db, accountId, 'mail_draft', {
    payload: { work: 'email', to: `${subject}@acme.test`, draft: { subject, body: 'Hello' } },
  });
}

const HTTP = 'gas_http_request_duration_seconds_count';

describe('/metrics of an API process', () => {
  it('is served on its own port, never the API port', async () => {
    expect(apiMetrics).not.toBe(apiPort);
    const onApi = await call('/metrics');
    expect(onApi.status).toBe(404);
    const { text } = await scrape(apiMetrics);
    expect(text).toContain('# TYPE gas_http_request_duration_seconds histogram');
  });

  it('times requests by route template and status; a path no route serves is `unmatched`', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    const card = await mailCard(env, accountId, 'route-template');
    expect((await call('/api/v1/me', token)).status).toBe(200);
    expect((await call(`/api/v1/review/${card.id}`, token)).status).toBe(200);
    expect((await call(`/api/v1/review/card_doesnotexist`, token)).status).toBe(404);
    expect((await call(`/api/v1/nothing/${accountId}`, token)).status).toBe(404);
    const { samples } = await scrape(apiMetrics);
    expect(sampleValue(samples, HTTP, { method: 'GET', route: '/api/v1/me', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, HTTP, { method: 'GET', route: '/api/v1/review/{id}', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, HTTP, { method: 'GET', route: '/api/v1/review/{id}', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(samples, HTTP, { method: 'GET', route: 'unmatched', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(samples.filter((s) => s.name === HTTP).map((s) => s.labels.route)).not.toContain(`/api/v1/review/${card.id}`);
  });

  it('counts 3 mails sent as gas_sends_total{channel="email",outcome="sent"} 3', async ({ env, smtp }) => {
    const before = sampleValue((await scrape(apiMetrics)).samples, 'gas_sends_total', { channel: 'email', outcome: 'sent' }) ?? 0;
    const { accountId, token } = await env.tenant();
    for (const n of [1, 2, 3]) {
      const card = await mailCard(env, accountId, `three-sends-${n}`);
      expect((await call(`/api/v1/review/${card.id}/send`, token, 'POST')).status).toBe(200);
    }
    expect(smtp.received.filter((m) => m.raw.includes('three-sends-')).length).toBe(3);
    const { samples } = await scrape(apiMetrics);
    expect(before).toBe(0);
    expect(sampleValue(samples, 'gas_sends_total', { channel: 'email', outcome: 'sent' })).toBe(3);
    expect(sampleValue(samples, 'gas_cards_decided_total', { kind: 'approval', decider: 'person' })).toBe(3);
    expect(sampleValue(samples, HTTP, { method: 'POST', route: '/api/v1/review/{id}/send', status: '200' })).toBe(3);
  });
});

/** Every series of the catalog (prom-client's process metrics aside: GC kinds and handle types come and go). */
const catalog = (samples: Sample[]) => samples.filter((s) => s.name.startsWith('gas_') && !/^gas_(process|nodejs)_/.test(s.name));

describe('cardinality', () => {
  /** One account's traffic: its ids in paths, a send, the public doors with made-up tokens. */
  async function accountRun(env: TestEnv, i: number): Promise<string[]> {
    const { accountId, token } = await env.tenant(undefined, `Tenant ${i}`);
    const card = await mailCard(env, accountId, `card-run-${i}-${Date.now()}`);
    expect((await call(`/api/v1/review/${card.id}`, token)).status).toBe(200);
    expect((await call(`/api/v1/review/${card.id}/send`, token, 'POST')).status).toBe(200);
    expect((await call(`/api/v1/leads/lead_missing${i}`, token)).status).toBe(404);
    expect((await call(`/api/v1/review/${card.id}/nothing`, token)).status).toBe(404);
    expect((await call(`/u/unsub${i}token`)).status).toBe(404);
    expect((await call(`/l/code${i}`)).status).toBe(404);
    expect((await call(`/${accountId}/x@y.test`)).status).toBe(404);
    return [accountId, card.id, token];
  }

  it('after a multi-account run no label carries an id, and more accounts add no series', async ({ env }) => {
    const seen = [...(await accountRun(env, 1)), ...(await accountRun(env, 2))];
    const first = catalog((await scrape(apiMetrics)).samples);
    for (let i = 3; i <= 6; i++) seen.push(...(await accountRun(env, i)));
    const { samples } = await scrape(apiMetrics);
    const second = catalog(samples);
    const values = samples.flatMap((s) => Object.values(s.labels));
    for (const bad of ['acc_', 'card_', 'lead_', '@', 'gat_', 'unsub', 'code1']) expect(values.filter((v) => v.includes(bad))).toEqual([]);
    for (const id of seen) expect(values.filter((v) => v.includes(id))).toEqual([]);
    expect(second.length).toBe(first.length);
    // Bounded by construction: the catalog's series here are far fewer than the six accounts' requests would make with ids.
    expect(second.length).toBeLessThan(400);
    expect(sampleValue(samples, HTTP, { route: '/u/{token}', status: '404' })).toBe(6);
    expect(sampleValue(samples, 'gas_public_door_requests_total', { door: 'link', outcome: 'not_found' })).toBe(6);
  });
});

describe('/metrics of a worker process', () => {
  it('shows queue counts per queue and state, and a job run by queue, job and outcome', async ({ env }) => {
    await enqueue(env.deps.queues, cardSweep, {});
    const samples = await until(
      async () => {
        const { samples } = await scrape(workerMetrics);
        const done = sampleValue(samples, 'gas_job_duration_seconds_count', {
          queue: 'card-timers',
          job: 'card.sweep',
          outcome: 'completed',
        });
        return done && done >= 1 ? samples : null;
      },
      30_000,
      100,
    );
    for (const queue of OPEN_QUEUES)
      for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed'])
        expect(sampleValue(samples, 'gas_queue_jobs', { queue, state }), `${queue} ${state}`).toBeTypeOf('number');
    expect(sampleValue(samples, 'gas_pg_pool_connections', { state: 'used' })).toBeTypeOf('number');
    expect(sampleValue(samples, 'gas_nodejs_eventloop_lag_seconds')).toBeTypeOf('number');
    expect(sampleValue(samples, 'gas_delivery_pending_oldest_seconds')).toBe(0);
    expect(sampleValue(samples, 'gas_redis_command_duration_seconds_count', { role: 'producer' })).toBeGreaterThanOrEqual(1);
  });
});

describe('a real Prometheus scraping the API and a worker process', () => {
  let prom: PrometheusServer;
  // Started in a hook, whose deadline covers Prometheus's readiness wait (30 s), not in the test.
  beforeAll(async () => {
    ensurePrometheus();
    prom = await startPrometheus([
      { job: 'gas-api', targets: [`127.0.0.1:${apiMetrics}`] },
      { job: 'gas-workers', targets: [`127.0.0.1:${workerMetrics}`] },
    ]);
  });
  afterAll(async () => {
    await prom?.stop();
  });

  // Four waits on scrapes, each bounded (20 s) and naming what it waited for: the test's own deadline covers them all,
  // so a slow machine ends in the wait that did not come, not in vitest's timeout halfway through.
  it('reads the sends, the job runs and both targets up through its query API', { timeout: SLOW }, async ({ env }) => {
    const up = await prom.waitFor('up', (r) => r.length === 2 && r.every((x) => x.value === 1), 'both targets up');
    expect(up.map((x) => x.metric.job).sort()).toEqual(['gas-api', 'gas-workers']);
    // Three more sends through the API: the counter Prometheus stored moves by exactly three.
    const EMAIL_SENT = 'sum(gas_sends_total{job="gas-api",channel="email",outcome="sent"}) or vector(0)';
    const before = (await prom.waitFor(EMAIL_SENT, (r) => r.length === 1, 'the sends scraped'))[0]!.value;
    const { accountId, token } = await env.tenant();
    for (const n of [1, 2, 3]) {
      const card = await mailCard(env, accountId, `prometheus-sends-${n}`);
      expect((await call(`/api/v1/review/${card.id}/send`, token, 'POST')).status).toBe(200);
    }
    const after = await prom.waitFor(EMAIL_SENT, (r) => r[0]?.value === before + 3, 'three more email sends scraped');
    expect(after[0]!.value - before).toBe(3);
    // A job the worker ran, and its queue counts (the same queues in every process: max, not sum).
    await enqueue(env.deps.queues, cardSweep, {});
    const runs = await prom.waitFor(
      'sum(gas_job_duration_seconds_count{job="gas-workers",queue="card-timers",outcome="completed"})',
      (r) => (r[0]?.value ?? 0) >= 1,
      'a card-timers job run scraped',
    );
    expect(runs[0]!.value).toBeGreaterThanOrEqual(1);
    const queues = await prom.query('max by (queue) (gas_queue_jobs{state="waiting"})');
    expect(queues.map((x) => x.metric.queue).sort()).toEqual([...OPEN_QUEUES].sort());
  });
});

describe('/metrics of the inbound listener process', () => {
  it('counts the SMTP door refusals by outcome', async ({ env }) => {
    const port = await freePort();
    const proc = startService(['inbound-mail'], {
      ...envFor(env.config),
      INBOUND_SMTP_PORT: String(port),
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
    });
    procs.push(proc);
    const metrics = await metricsPort(proc);
    await proc.logged('inbound smtp listening', 60_000);
    const raw = rawMessage({ subject: 'door' });
    const relay = await smtpSend(port, { from: 'jane@acme.test', to: ['someone@elsewhere.test'], raw });
    const guessed = await smtpSend(port, { from: 'jane@acme.test', to: ['reply+guessedtoken123@localhost'], raw });
    expect([relay.code, guessed.code]).toEqual([550, 550]);
    const { samples } = await scrape(metrics);
    expect(sampleValue(samples, 'gas_public_door_requests_total', { door: 'smtp', outcome: 'no_recipient' })).toBe(2);
    expect(sampleValue(samples, 'gas_public_door_requests_total', { door: 'smtp', outcome: 'served' })).toBeUndefined();
  });
});

describe('METRICS_PORT unset', () => {
  it('starts no listener', async ({ env }) => {
    const off = await startMetrics(
      { metrics: { port: null, host: '127.0.0.1', sampleMs: 1000 } },
      createLogger('silent'),
      env.deps.db,
      null,
    );
    expect(off).toBeNull();
  });
});
