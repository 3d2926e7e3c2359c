import { context, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configWith } from '../helpers/config.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { webhookEvent } from '../../src/jobs/webhook-events.js';
import { inboundParse } from '../../src/jobs/inbound-mail.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { startTracing, type Tracing } from '../../src/tracing/provider.js';
import { inSpan, tracingOn } from '../../src/tracing/spans.js';
import { setupTestEnv, type TestEnv } from '../helpers/env.js';
import { buildThread } from '../helpers/factories.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { until } from '../helpers/processes.js';
import { rawMessage, smtpSend } from '../helpers/smtp-client.js';
import { makeHook, postJson } from '../webhooks/helpers.js';

/**
 * Where traces start besides an API request: webhook intake (gathered POSTs, each job in its own request's
 * trace) and a message taken by the inbound SMTP listener. Tracing is started in this test's process, as
 * bin/start.ts does, before the queues are made.
 */
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
let tracing: Tracing | null = null;

describe('without OTEL_* settings', () => {
  it('starts no provider: no span records, no context is kept, nothing is exported', async () => {
    const config = configWith({});
    expect(config.tracing).toBeNull();
    expect(startTracing(config, 'api')).toBeNull();
    expect(tracingOn()).toBe(false);
    const span = trace.getTracer('any').startSpan('anything');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe('0'.repeat(32));
    expect(context.with(trace.setSpan(ROOT_CONTEXT, span), () => trace.getActiveSpan())).toBeUndefined();
    expect(await inSpan('work', {}, async (s) => s.isRecording())).toBe(false);
  });
});

describe('with tracing on', () => {
  // A world of its own, not the shared fixture's: tracing must start before its queues are made, and the fixture's
  // world is made at the file's first test.
  let env: TestEnv;
  let listener: InboundSmtp;
  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    tracing = startTracing(configWith({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_SERVICE_NAME: 'entry-test' }), 'all');
    env = await setupTestEnv();
    listener = await startInboundSmtp(env.deps, { port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await listener?.close();
    await tracing?.shutdown();
    await env?.close();
    await otlp?.close();
  });

  const spansOf = async (traceId: string) => {
    await tracing!.flush();
    return otlp.spans.filter((s) => s.traceId === traceId);
  };

  it("webhook POSTs gathered into one batch: each delivery's job is queued in its own request's trace", async () => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId);
    const posts = await Promise.all([1, 2, 3, 4, 5].map((n) => postJson(env, hook.path, { email: `lead${n}@acme.test`, n })));
    for (const res of posts) {
      expect(res.status).toBe(202);
      const traceId = res.headers['x-request-id'] as string;
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      const spans = await spansOf(traceId);
      const server = spans.find((s) => s.kind === 2)!;
      expect(server).toMatchObject({ service: 'entry-test', name: 'POST /api/webhook/hook/{hookToken}' });
      const add = spans.filter((s) => s.name === 'add webhook-events.webhook.event');
      expect(add).toHaveLength(1);
      // The job carries the trace context its worker's span joins.
      const job = await pendingJob(env.deps.queues.get('webhook-events')!, webhookEvent.key({ deliveryId: res.body.deliveryId }));
      expect(job?.opts.telemetry?.metadata).toContain(traceId);
      expect(JSON.stringify(spans)).not.toContain(hook.path.split('/').pop());
    }
  });

  it('a message taken by the inbound SMTP listener starts a trace its parse job joins', async () => {
    const { replyToken } = await buildThread(env.deps.db, (await env.tenant()).accountId);
    const to = `reply+${replyToken}@localhost`;
    const answer = await smtpSend(listener.port, { from: 'sender@example.org', to: [to], raw: rawMessage({ to }) });
    expect(answer.ok).toBe(true);
    const inboundId = /queued as (\S+)/.exec(answer.response)![1]!;
    // Its span ends once the parse job is queued, just after the 250.
    const received = await until(async () => {
      await tracing!.flush();
      return otlp.spans.find((s) => s.name === 'smtp receive' && s.attributes['gas.inbound.id'] === inboundId);
    });
    expect(received).toMatchObject({ kind: 2, parentSpanId: '' });
    const spans = await spansOf(received.traceId);
    expect(spans.map((s) => s.name)).toContain('add inbound-mail.inbound.parse');
    const job = await pendingJob(env.deps.queues.get('inbound-mail')!, inboundParse.key({ id: inboundId }));
    expect(job?.opts.telemetry?.metadata).toContain(received.traceId);
    expect(JSON.stringify(spans)).not.toContain('example.org');
  });
});
