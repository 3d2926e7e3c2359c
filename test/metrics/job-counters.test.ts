import { z } from 'zod';
import { describe, expect } from 'vitest';
import { defineJob, enqueue } from '../../src/jobs/registry.js';
import { metrics } from '../../src/metrics/registry.js';
import { defineProcessor } from '../../workers/create-worker.js';
import { it } from '../helpers/fixture.js';
import { queueWorker } from '../helpers/test-worker.js';

/** Job duration, outcome and retries, counted by createWorker around a real BullMQ worker on the test Redis. */

const flaky = defineJob({
  queue: 'test-flaky',
  name: 'test.flaky',
  payload: z.object({ n: z.number() }),
  options: { attempts: 3, backoff: { type: 'fixed', delay: 10 } },
  description: 'fails twice, then works',
  jobId: (p) => `flaky-${p.n}`,
});

type Values = { values: { metricName?: string; labels: Record<string, string | number | undefined>; value: number }[] };

async function count(metric: { get(): Promise<unknown> }, labels: Record<string, string>, name?: string) {
  const { values } = (await metric.get()) as Values;
  return values
    .filter((v) => (!name || v.metricName === name) && Object.entries(labels).every(([k, want]) => v.labels[k] === want))
    .reduce((n, v) => n + v.value, 0);
}

describe('job metrics', () => {
  it('times each run by outcome and counts the retries of a job that fails twice and then completes', async ({ env }) => {
    let runs = 0;
    const { queues, events, close } = queueWorker(
      env,
      defineProcessor({
        job: flaky,
        run: async ({ n }) => {
          if (++runs < 3) throw new Error('not yet');
          return n;
        },
      }),
    );
    try {
      await events.waitUntilReady();
      const id = await enqueue(queues, flaky, { n: 7 });
      const job = (await queues.get('test-flaky')!.getJob(id))!;
      expect(await job.waitUntilFinished(events, 10_000)).toBe(7);
      const labels = { queue: 'test-flaky', job: 'test.flaky' };
      expect(await count(metrics.jobRetries, labels)).toBe(2);
      expect(await count(metrics.jobDuration, { ...labels, outcome: 'failed' }, 'gas_job_duration_seconds_count')).toBe(2);
      expect(await count(metrics.jobDuration, { ...labels, outcome: 'completed' }, 'gas_job_duration_seconds_count')).toBe(1);
    } finally {
      await close();
    }
  });
});
