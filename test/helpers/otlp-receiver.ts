import { createServer, type Server } from 'node:http';

/** One span as the OTLP/HTTP JSON exporter sent it, with its process's service name. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
}

interface KeyValue {
  key: string;
  value: Record<string, unknown>;
}

const plain = (list: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((list ?? []).map(({ key, value }) => [key, Object.values(value)[0]]));

/**
 * An OTLP/HTTP receiver on loopback (`POST /v1/traces`, JSON), as a collector would be: keeps every span
 * it is sent, answers 200. `endpoint` is what OTEL_EXPORTER_OTLP_ENDPOINT is set to.
 */
export async function startOtlpReceiver(): Promise<{
  endpoint: string;
  spans: ReceivedSpan[];
  posts: () => number;
  close(): Promise<void>;
}> {
  const spans: ReceivedSpan[] = [];
  let posts = 0;
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces' || !String(req.headers['content-type']).includes('json')) {
        res.writeHead(415).end();
        return;
      }
      posts++;
      const body = JSON.parse(raw) as {
        resourceSpans: {
          resource: { attributes: KeyValue[] };
          scopeSpans: {
            spans: (Omit<ReceivedSpan, 'service' | 'attributes' | 'events'> & {
              attributes?: KeyValue[];
              events?: { name: string; attributes?: KeyValue[] }[];
            })[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const service = String(plain(rs.resource.attributes)['service.name']);
        for (const ss of rs.scopeSpans)
          for (const s of ss.spans)
            spans.push({
              service,
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              kind: s.kind,
              attributes: plain(s.attributes),
              events: (s.events ?? []).map((e) => ({ name: e.name, attributes: plain(e.attributes) })),
            });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    posts: () => posts,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
