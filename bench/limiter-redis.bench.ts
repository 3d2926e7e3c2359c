/**
 * What the limiter script costs Redis, in instructions (decisions, "The limiter's cost in Redis"). Every
 * authenticated request runs it, on Redis's one thread, so it is a share of every shard's capacity.
 * Timings of a few µs are noise on these VMs; instruction counts are not: a private redis-server runs
 * under `valgrind --tool=callgrind`, its counters are zeroed before each target and dumped after it
 * (`callgrind_control`), and each figure is instructions per call, beside baselines in the same run: a
 * bare INCR and an EVALSHA of `return 1` given the same keys and arguments as one request's call.
 * The limiter is the service's own (src/rate-limit.ts), so the figure follows the script as shipped.
 */
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import type { BucketLimit } from '../src/config.js';
import { queueVersionKeys } from '../src/queue-version/keys.js';
import { bucketKey, createRateLimiter } from '../src/rate-limit.js';
import { authGuardKeys } from '../src/tokens/auth-guard.js';
import { callgrindMissing, underCallgrind } from './callgrind.js';
import { fmt, freePort } from './lib.js';
import type { BenchContext, Section } from './run.js';

const CALLS = 2000;
const WIDE: BucketLimit = { perMinute: 100_000_000, burst: 100_000_000 };
const LIMITS = { reads: WIDE, writes: WIDE, messages: WIDE, account: WIDE };

export async function limiterRedis(_ctx: BenchContext): Promise<Section> {
  const title = "The limiter's cost in Redis";
  const missing = callgrindMissing();
  if (missing) return { title, body: missing };
  const port = await freePort();
  const server = await underCallgrind('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  const redis = new Redis(port, '127.0.0.1', { retryStrategy: (n) => (n > 100 ? null : 200), maxRetriesPerRequest: null });
  redis.on('error', () => undefined);
  try {
    await redis.ping();
    /** Instructions Redis ran for `fn`'s calls, per call. */
    const measure = async (fn: () => Promise<unknown>, calls: number): Promise<number> => {
      await fn(); // warm-up: the script loaded, the keys made
      return server.measure(async () => {
        for (let i = 0; i < calls; i++) await fn();
      }, calls);
    };
    const limiter = createRateLimiter(redis, 'bench', LIMITS);
    // The keys one request's call names, built as the limiter builds them (src/rate-limit.ts).
    const guard = authGuardKeys('bench', 'acct', 'tok0');
    const version = queueVersionKeys('bench', 'acct');
    const keys = [
      bucketKey('bench', 'acct', 'account'),
      guard.epoch,
      version.counter,
      version.writing,
      bucketKey('bench', 'acct', 'tok0:reads'),
      guard.revoked,
    ];
    const args = [WIDE.perMinute, WIDE.burst, 'epoch', WIDE.perMinute, WIDE.burst];
    const noop = (await redis.script('LOAD', 'return 1')) as string;
    const batch = (n: number) => () => Promise.all(Array.from({ length: n }, (_, i) => limiter.consume('acct', `tok${i}`, 'reads')));
    const rows: [string, number, number][] = [
      ['INCR of one key', await measure(() => redis.incr('bench:incr'), CALLS), 1],
      [
        'EVALSHA of `return 1`, the keys and arguments of one request',
        await measure(() => redis.evalsha(noop, keys.length, ...keys, ...args), CALLS),
        1,
      ],
      ['limiter, one request a call', await measure(batch(1), CALLS), 1],
      ['limiter, 4 requests of one account a call', await measure(batch(4), CALLS / 4), 4],
      ['limiter, 16 requests of one account a call', await measure(batch(16), CALLS / 16), 16],
    ];
    const incr = rows[0]![1];
    const lines = [
      `A private redis-server (${execFileSync('redis-server', ['--version']).toString().split(' ')[2]}) under callgrind; ` +
        `${CALLS} requests a target, one call at a time after a warm-up. Instructions are what Redis's thread ran for the ` +
        'calls: reading the command, running it, writing the reply.',
      '',
      '| target | instructions a call | a request | × INCR a request |',
      '|---|---:|---:|---:|',
      ...rows.map(([name, perCall, n]) => `| ${name} | ${fmt(perCall)} | ${fmt(perCall / n)} | ${fmt(perCall / n / incr, 1)}× |`),
    ];
    return { title, body: lines.join('\n') };
  } finally {
    redis.disconnect();
    await server.stop();
  }
}
