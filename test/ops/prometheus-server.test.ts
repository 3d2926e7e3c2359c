import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrometheus, type PrometheusServer } from '../helpers/prometheus.js';

/**
 * The private Prometheus of test/helpers/prometheus.ts, against a tiny HTTP server that serves a static
 * exposition: it scrapes every second, and its query API reads back the counter's value, then its next value.
 */
describe('a private Prometheus scraping a local /metrics', () => {
  let value = 42;
  let scrapes = 0;
  let target: Server;
  let prom: PrometheusServer;

  beforeAll(async () => {
    target = createServer((req, res) => {
      if (req.url !== '/metrics') return void res.writeHead(404).end();
      scrapes++;
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        [
          '# HELP gas_sends_total Sends by channel and outcome.',
          '# TYPE gas_sends_total counter',
          `gas_sends_total{channel="email",outcome="sent"} ${value}`,
          'gas_sends_total{channel="network",outcome="sent"} 1',
          '',
        ].join('\n'),
      );
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const address = target.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    prom = await startPrometheus([{ job: 'gas-selftest', targets: [`127.0.0.1:${port}`] }]);
  });

  afterAll(async () => {
    await prom?.stop();
    await new Promise((resolve) => target?.close(resolve));
  });

  // Two waits on scrapes, each bounded (20 s) and naming what it waited for: the test's deadline covers both, so a
  // slow machine ends in the wait that did not come rather than in vitest's timeout between them.
  it('reads the counter back through /api/v1/query, with the target labels, and follows it as it grows', { timeout: 60_000 }, async () => {
    const expr = 'gas_sends_total{channel="email"}';
    const first = await prom.waitFor(expr, (s) => s.length === 1, 'the first scrape');
    expect(first).toEqual([
      {
        metric: { __name__: 'gas_sends_total', channel: 'email', outcome: 'sent', job: 'gas-selftest', instance: expect.any(String) },
        value: 42,
      },
    ]);
    expect(await prom.query('sum by (channel) (gas_sends_total)')).toEqual(
      expect.arrayContaining([
        { metric: { channel: 'email' }, value: 42 },
        { metric: { channel: 'network' }, value: 1 },
      ]),
    );
    expect(await prom.query('up{job="gas-selftest"}')).toEqual([{ metric: expect.objectContaining({ __name__: 'up' }), value: 1 }]);

    value = 45;
    await prom.waitFor(expr, (s) => s[0]?.value === 45, 'the counter to read 45');
    expect(scrapes).toBeGreaterThanOrEqual(2);
  });

  it('names a query Prometheus cannot parse in the error', async () => {
    await expect(prom.query('sum by (channel gas_sends_total')).rejects.toThrow(/query sum by \(channel gas_sends_total: .*parse error/);
  });
});
