import type { Job, JobType, Queue } from 'bullmq';
import type { QueueName } from '../../src/jobs/registry.js';
import type { TestEnv } from './env.js';

/**
 * Settings for a test's worker processes that get killed: BullMQ's stalled-job check hands a dead
 * worker's job back within a few seconds instead of 30 to 60 (the defaults), so `waitQueuesIdle` does
 * not wait that long for it.
 */
export const QUICK_STALLS = { JOBS_LOCK_MS: '4000', JOBS_STALLED_INTERVAL_MS: '1000' };

/** States a job is in while it may still do something: queued, running, or waiting for its time or a retry. */
const LIVE: JobType[] = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children'];

/** A repeating sweep's run is made by a BullMQ job scheduler (id `repeat:…`): one is always due, so it is never work left. */
const isSweep = (jobId: string) => jobId.startsWith('repeat:');

/** The jobs of `queue` that are not a sweep's and are not finished (named, for the timeout's message). */
async function liveWork(queue: Queue): Promise<string[]> {
  const jobs = (await queue.getJobs(LIVE)).filter((j): j is Job => Boolean(j?.id) && !isSweep(j!.id!));
  return jobs.map((j) => `${queue.name}/${j.name}/${j.id}`);
}

interface Seen {
  /** Sweep runs that started and finished after `since`. */
  sweeps: number;
  /** Other jobs that started or finished after `since`. */
  others: string[];
}

/**
 * What `queue`'s event stream says ran after `since` (a Redis time in ms). The stream, not the finished
 * sets: a sweep's run is removed once complete, and keeps only its events.
 */
async function ranSince(env: Pick<TestEnv, 'deps'>, queue: Queue, since: number): Promise<Seen> {
  const entries = await env.deps.redis.xrange(queue.toKey('events'), String(since), '+');
  const started = new Set<string>();
  const seen: Seen = { sweeps: 0, others: [] };
  for (const [, fields] of entries) {
    const f: Record<string, string> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
    const { event, jobId } = f;
    if (!jobId || !['active', 'completed', 'failed', 'stalled'].includes(event!)) continue;
    if (!isSweep(jobId)) seen.others.push(`${queue.name}/${jobId} ${event}`);
    else if (event === 'active') started.add(jobId);
    else if (started.has(jobId)) seen.sweeps++;
  }
  return seen;
}

/** Redis's clock in ms (the clock of the queues' event streams). */
export async function redisNow(env: Pick<TestEnv, 'deps'>): Promise<number> {
  const [secs, micros] = await env.deps.redis.time();
  return Number(secs) * 1000 + Math.floor(Number(micros) / 1000);
}

/** Jobs of `names` BullMQ's stalled-job check found orphaned (their worker gone) and queued again since `since`. */
export async function stalledSince(env: Pick<TestEnv, 'deps'>, names: QueueName[], since: number): Promise<string[]> {
  const found: string[] = [];
  for (const name of names) {
    const entries = await env.deps.redis.xrange(env.deps.queues.get(name)!.toKey('events'), String(since), '+');
    for (const [, fields] of entries) if (fields[1] === 'stalled') found.push(`${name}/${fields[3]}`);
  }
  return found;
}

/**
 * Waits until the work of `names` is over for good, before a test counts what reached the outside: no
 * job waiting, running (a killed worker's job stays `active` until BullMQ's stalled-job check hands it
 * back, and then runs again), delayed or waiting to retry, other than each queue's repeating sweep;
 * then until the sweep of each queue in `sweeps` (all of them unless given: a test may run one sweep
 * too seldom to wait for) has run twice more on that quiet world, with no other job running meanwhile
 * (else it starts over). A duplicate made by a stalled job run late, or by a sweep that finds something
 * left over, is then among what the test counts. Each queue in `sweeps` must have a worker running it.
 */
export async function waitQueuesIdle(
  env: Pick<TestEnv, 'deps'>,
  names: QueueName[],
  { sweeps = names, timeoutMs = 120_000 }: { sweeps?: QueueName[]; timeoutMs?: number } = {},
): Promise<void> {
  const queues = names.map((n) => env.deps.queues.get(n)!);
  const deadline = Date.now() + timeoutMs;
  let left: string[] = [];
  let seen: Seen[] = [];
  while (Date.now() < deadline) {
    left = (await Promise.all(queues.map(liveWork))).flat();
    if (left.length) {
      await new Promise((r) => setTimeout(r, 100));
      continue;
    }
    const since = await redisNow(env);
    let quiet = false;
    while (Date.now() < deadline) {
      seen = await Promise.all(queues.map((q) => ranSince(env, q, since)));
      left = (await Promise.all(queues.map(liveWork))).flat();
      if (left.length || seen.some((s) => s.others.length)) break;
      if (seen.every((s, i) => s.sweeps >= 2 || !sweeps.includes(names[i]!))) {
        quiet = true;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (quiet) return;
  }
  const last = seen.map((s, i) => `${names[i]}: ${s.sweeps} sweeps, then ${s.others.slice(0, 5).join(', ') || 'nothing else'}`);
  throw new Error(
    `queues not idle after ${timeoutMs} ms; still live: ${left.slice(0, 10).join(', ') || 'none'}; last seen: ${last.join('; ')}`,
  );
}
