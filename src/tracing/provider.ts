import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type SpanProcessor } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Config } from '../config.js';
import { tracingStarted } from './spans.js';

/** The process kinds bin/start.ts runs, each its own default service name. */
export type ProcessKind = 'all' | 'api' | 'workers' | 'inbound-mail';

const SERVICE: Record<ProcessKind, string> = {
  all: 'growth-agent',
  api: 'growth-agent-api',
  workers: 'growth-agent-workers',
  'inbound-mail': 'growth-agent-inbound',
};

/**
 * Attributes and event attributes BullMQ's telemetry writes that can carry what a span must not (a
 * processor's return value, an error's message, a stack whose first line is that message: addresses,
 * replies of mail servers). Dropped before the span is exported; the error's type stays.
 */
const UNSAFE = ['bullmq.job.result', 'bullmq.job.failed.reason', 'bullmq.job.progress', 'exception.message', 'exception.stacktrace'];

function scrub(attributes: Record<string, unknown> | undefined): void {
  if (!attributes) return;
  for (const key of UNSAFE) delete attributes[key];
}

/** Runs before the batch processor sees an ended span: cuts the unsafe attributes out of it and its events. */
const redact: SpanProcessor = {
  onStart() {},
  onEnd(span: ReadableSpan) {
    scrub(span.attributes);
    for (const event of span.events) scrub(event.attributes);
  },
  forceFlush: () => Promise.resolve(),
  shutdown: () => Promise.resolve(),
};

export interface Tracing {
  /** Exports what is buffered now. */
  flush(): Promise<void>;
  /** Exports what is still buffered and stops; called once the process has stopped its work. */
  shutdown(): Promise<void>;
}

/**
 * Starts the process's tracer provider (a batch processor, the OTLP/HTTP exporter) and registers it with
 * W3C trace-context propagation and an AsyncLocalStorage context, when OTEL_* configures tracing; else
 * does nothing and returns null (no provider, no context manager: every span helper is a pass-through).
 */
export function startTracing(config: Pick<Config, 'tracing'>, kind: ProcessKind): Tracing | null {
  if (!config.tracing) return null;
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.tracing.serviceName ?? SERVICE[kind] })),
    spanProcessors: [redact, new BatchSpanProcessor(new OTLPTraceExporter({ url: config.tracing.url }))],
  });
  provider.register();
  tracingStarted(true);
  return {
    flush: () => provider.forceFlush(),
    async shutdown() {
      await provider.shutdown().catch(() => {});
      tracingStarted(false);
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
