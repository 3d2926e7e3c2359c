import {
  type Attributes,
  type Context,
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { BullMQOtel } from 'bullmq-otel';

export { SpanKind, type Span, type Context as TraceContext };

/**
 * The span helpers every area uses (docs/decisions/tracing.md). While tracing is off (no OTEL_* endpoint)
 * each is a pass-through: no span, no context switch. Span attributes are ids of our rows, route
 * templates, kinds, counts and error types: never an address, a token, a secret or message text.
 */
let on = false;
let telemetry: BullMQOtel | undefined;

/** Set by startTracing (src/tracing/provider.ts) once its provider is registered, and cleared at shutdown. */
export function tracingStarted(started: boolean): void {
  on = started;
  telemetry = started ? new BullMQOtel({ tracerName: 'bullmq' }) : undefined;
}

export const tracingOn = (): boolean => on;

/**
 * The `telemetry` option of every BullMQ Queue and Worker: with it, an add carries the producer's trace
 * context in the job and the worker's job span joins that trace. Undefined while tracing is off.
 */
export const queueTelemetry = (): BullMQOtel | undefined => telemetry;

const tracer = () => trace.getTracer('growth-agent');

/** The span that does nothing (what `fn` gets while tracing is off). */
const NO_SPAN = trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId: '0'.repeat(16), traceFlags: 0 });

/** What went wrong, by its type only (an error's message may quote an address or a server's reply). */
export function failed(span: Span, err: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', err instanceof Error ? err.name : typeof err);
}

/**
 * Runs `fn` in a new span, a child of the active one (a root with `root`), ended when `fn` settles; an
 * error marks it failed and is thrown on.
 */
export async function inSpan<T>(
  name: string,
  opts: { kind?: SpanKind; attributes?: Attributes; root?: boolean },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!on) return fn(NO_SPAN);
  const parent = opts.root ? ROOT_CONTEXT : context.active();
  const span = tracer().startSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes: opts.attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    failed(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * A span for an incoming HTTP request, continuing the caller's W3C `traceparent` when it sends a valid one,
 * and the context to run the request in. The caller names it (its route template) and ends it.
 */
export function serverSpan(method: string, headers: Record<string, string | string[] | undefined>): { span: Span; ctx: Context } {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer().startSpan(method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } }, parent);
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Runs `fn` in `ctx`. */
export const withContext = <T>(ctx: Context, fn: () => T): T => context.with(ctx, fn);

/**
 * The active context when tracing is on (to hand work gathered from several requests back to each
 * request's trace), else undefined.
 */
export const currentContext = (): Context | undefined => (on ? context.active() : undefined);

/** Runs `fn` in `ctx` when there is one (a context from currentContext), else as it is. */
export const within = <T>(ctx: Context | undefined, fn: () => T): T => (ctx ? context.with(ctx, fn) : fn());

/** The trace id of the active span, or undefined (tracing off, or no span). */
export function activeTraceId(): string | undefined {
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc && isSpanContextValid(sc) ? sc.traceId : undefined;
}

/**
 * Wraps each named async method of `target` in a CLIENT span `<prefix> <method>` carrying `attributes`:
 * the outside calls (mail transports, provider bridges). Whether tracing is on is asked at each call, so
 * a target made before tracing started is traced too.
 */
export function tracedCalls<T extends object>(prefix: string, target: T, methods: (keyof T & string)[], attributes: Attributes = {}): T {
  const wrapped = { ...target };
  for (const m of methods) {
    const call = target[m] as unknown as (...args: unknown[]) => Promise<unknown>;
    (wrapped as Record<string, unknown>)[m] = (...args: unknown[]) =>
      inSpan(`${prefix} ${m}`, { kind: SpanKind.CLIENT, attributes }, () => call.apply(target, args));
  }
  return wrapped;
}
