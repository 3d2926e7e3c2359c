import { afterAll, describe, expect } from 'vitest';
import { completion, llmEnv, type startFakeLlm } from '../helpers/fake-llm.js';
import { envFor, type TestEnv } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { startOtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { until } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { startService, type ServiceProcess } from '../helpers/service-process.js';

/**
 * Traces across real processes: an API process and a separate worker process, both exporting to an
 * OTLP/HTTP receiver in this test. One message to the agent (the llm brain against the model stand-in)
 * is one trace: the API's request span, the worker's job span and the model call's span.
 */
const SLOW = 180_000;
let otlp: Awaited<ReturnType<typeof startOtlpReceiver>>;
const procs: ServiceProcess[] = [];

it.beforeAll(async () => {
  otlp = await startOtlpReceiver();
}, SLOW);

afterAll(async () => {
  for (const p of procs) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await otlp?.close();
});

/** Both processes alike but for their role; `otel` is their OTEL_* settings. */
async function start(
  env: TestEnv,
  llm: Awaited<ReturnType<typeof startFakeLlm>>,
  otel: Record<string, string>,
): Promise<{ port: number; api: ServiceProcess }> {
  const base = { ...envFor(env.config), ...llmEnv(llm), LOG_LEVEL: 'info', OTEL_BSP_SCHEDULE_DELAY: '100', ...otel };
  const api = startService(['api'], { ...base, PORT: '0' });
  const worker = startService(['workers', '--pools', 'agent-turns'], base);
  procs.push(api, worker);
  try {
    const [port] = await Promise.all([api.port(90_000), worker.logged('worker pools running', 90_000)]);
    return { port, api };
  } catch (err) {
    throw new Error(`${(err as Error).message}\napi: ${api.output().slice(-2000)}\nworker: ${worker.output().slice(-2000)}`);
  }
}

async function message(port: number, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/agent/messages`, {
    method: 'POST',
    headers: { ...auth(token), 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ text: 'hello there, ada@example.com', waitSeconds: 30 }),
  });
  return { status: res.status, requestId: res.headers.get('x-request-id')!, body: (await res.json()) as { message?: { status: string } } };
}

/** The `request completed` line the API logged for POST /agent/messages: its `req.id`. */
function loggedIds(api: ServiceProcess): string[] {
  return api
    .stdout()
    .split('\n')
    .filter((l) => l.includes('"msg":"request completed"') && l.includes('/api/v1/agent/messages'))
    .map((l) => (JSON.parse(l) as { req: { id: string } }).req.id);
}

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let port = 0;
  let api: ServiceProcess;
  it.beforeAll(async ({ env, llm }) => {
    ({ port, api } = await start(env, llm, { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }));
  }, SLOW);

  it('one trace id on the request span, the job span in the worker process and the model call, and in the request log', async ({
    llm,
    env,
  }) => {
    llm.script(() => ({ body: completion('Hi! How can I help?') }));
    const { token } = await env.tenant();
    const sent = await message(port, token);
    expect(sent.status).toBe(200);
    expect(sent.body.message?.status).toBe('replied');
    expect(sent.requestId).toMatch(/^[0-9a-f]{32}$/);
    const traceId = sent.requestId;
    const inTrace = (pick: (s: ReceivedSpan) => boolean) =>
      until(async () => otlp.spans.find((s) => s.traceId === traceId && pick(s)), 20_000, 50);
    const request = await inTrace((s) => s.kind === 2 && s.service === 'growth-agent-api');
    const add = await inTrace((s) => s.kind === 4 && s.name === 'add agent-turns.agent.turn');
    const job = await inTrace((s) => s.kind === 5 && s.name === 'process agent-turns');
    const model = await inTrace((s) => s.name === 'chat test-model');
    expect(request).toMatchObject({ name: 'POST /api/v1/agent/messages', parentSpanId: '' });
    expect(request.attributes).toMatchObject({ 'http.route': '/api/v1/agent/messages', 'http.response.status_code': 200 });
    expect(add.service).toBe('growth-agent-api');
    expect(job.service).toBe('growth-agent-workers');
    expect(job.parentSpanId).toBe(add.spanId);
    expect(model).toMatchObject({ service: 'growth-agent-workers', kind: 3 });
    expect(model.attributes).toMatchObject({ 'gen_ai.request.model': 'test-model' });
    await until(async () => loggedIds(api).includes(traceId), 10_000, 50);
    // Nothing of the message, its address or the token on any span of the trace.
    const text = JSON.stringify(otlp.spans.filter((s) => s.traceId === traceId));
    for (const secret of ['ada@example.com', 'hello there', 'How can I help', token, 'sk-test']) expect(text).not.toContain(secret);
  }, 60_000);

  it("continues a caller's traceparent; its X-Request-Id is kept on the span, the trace id is the request id", async ({ llm, env }) => {
    llm.script(() => ({ body: completion('Hello again.') }));
    const { token } = await env.tenant();
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const sent = await message(port, token, { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, 'x-request-id': 'client-req-1' });
    expect(sent.requestId).toBe(traceId);
    const request = await until(async () => otlp.spans.find((s) => s.traceId === traceId && s.kind === 2), 20_000, 50);
    expect(request).toMatchObject({ parentSpanId: '00f067aa0ba902b7' });
    expect(request.attributes['gas.client_request_id']).toBe('client-req-1');
    await until(async () => otlp.spans.find((s) => s.traceId === traceId && s.name === 'chat test-model'), 20_000, 50);
  }, 60_000);
});

describe('with OTEL_TRACES_EXPORTER=none', () => {
  it(
    'exports nothing, and the request id is the client’s or a UUID again',
    async ({ env, llm }) => {
      // A receiver of its own: the traced processes above go on exporting (their workers' polls are spans too).
      const quiet = await startOtlpReceiver();
      const { port } = await start(env, llm, { OTEL_EXPORTER_OTLP_ENDPOINT: quiet.endpoint, OTEL_TRACES_EXPORTER: 'none' });
      llm.script(() => ({ body: completion('Untraced.') }));
      const { token } = await env.tenant();
      const sent = await message(port, token);
      expect(sent.body.message?.status).toBe('replied');
      expect(sent.requestId).toMatch(/^[0-9a-f-]{36}$/);
      const tagged = await message(port, token, { 'x-request-id': 'client-req-2' });
      expect(tagged.requestId).toBe('client-req-2');
      // The traced processes above (same schedule delay, their workers' polls are spans too) post twice more: a
      // process exporting would have posted by then.
      const exported = otlp.posts();
      await until(async () => otlp.posts() >= exported + 2, 30_000);
      expect(quiet.posts()).toBe(0);
      await quiet.close();
    },
    SLOW,
  );
});
