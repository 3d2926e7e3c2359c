import { createServer, type Server } from 'node:http';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import type { Logger } from '../logger.js';
import { collectProcessMetrics, registry, watchPool, type PoolCounts } from './registry.js';
import { startSampler, type SamplerSources } from './sampler.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text format) on METRICS_HOST:METRICS_PORT, a listener of its own,
 * never the API's port. One per process, whatever roles it runs. With `sample` (a process running the
 * API or pools), queue counts and the oldest lost send answer are sampled every METRICS_SAMPLE_SECONDS.
 * Null when METRICS_PORT is unset.
 */
export async function startMetrics(
  config: Pick<Config, 'metrics'>,
  logger: Logger,
  db: Db,
  sample: SamplerSources | null,
): Promise<MetricsServer | null> {
  const { port, host, sampleMs } = config.metrics;
  if (port === null) return null;
  collectProcessMetrics();
  watchPool(() => (db.client as { pool?: PoolCounts }).pool);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found; GET /metrics\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (err: Error) => {
        logger.error({ err: err.message }, 'metrics not collected');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics not collected\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, resolve);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  const sampler = sample ? startSampler(sample, sampleMs, logger) : null;
  logger.info({ port: bound, host }, 'metrics listening');
  return {
    port: bound,
    close: async () => {
      sampler?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
