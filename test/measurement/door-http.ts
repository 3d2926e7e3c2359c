import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express } from 'express';

// Real HTTP to an app on loopback from chosen source addresses (127.0.0.1, 127.0.1.1, …), so a test
// can be several clients of a public door. Linux routes all of 127.0.0.0/8 to the loopback device.

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

export async function serve(app: Express): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const agents = new Map<string, http.Agent>();
const agentFor = (from: string) => {
  let a = agents.get(from);
  if (!a) {
    a = new http.Agent({ keepAlive: true, maxSockets: 50, localAddress: from });
    agents.set(from, a);
  }
  return a;
};

/** One request from `from` (kept-alive connections per source address). */
export function call(
  port: number,
  from: string,
  path: string,
  opts: { method?: string; userAgent?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: opts.method ?? 'GET',
        agent: agentFor(from),
        headers: { ...(opts.userAgent === undefined ? {} : { 'user-agent': opts.userAgent }), ...opts.headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** `count` calls of `make(i)`, `width` at a time; the answers in order. Bounded in count; the caller bounds the time. */
export async function flood<T>(count: number, width: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        const i = next++;
        out[i] = await make(i);
      }
    }),
  );
  return out;
}

export function closeAgents(): void {
  for (const a of agents.values()) a.destroy();
  agents.clear();
}
