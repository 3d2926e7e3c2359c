import { test as base } from 'vitest';
import type { QueueName } from '../../src/jobs/registry.js';
import { startPools, type Pools } from '../../workers/main.js';
import { agentWorld } from './agent.js';
import { setupTestEnv, type EnvOptions } from './env.js';
import { startDnsStandIn } from './dns-server.js';
import { startFakeLlm } from './fake-llm.js';
import { startTestSmtp } from './smtp-server.js';
import { startInboundSmtp } from '../../src/inbound/smtp-listener.js';

export type { TestEnv } from './env.js';
export type { AgentEnv } from './agent.js';
export { agentOptions } from './agent.js';
export type { Pools } from '../../workers/main.js';

/** What a test file asks of its world: environment variables, extra routes, a logger, pools to run in-process. */
export interface FileOptions extends EnvOptions {
  pools?: QueueName[];
}

/**
 * The shared test fixture. The world fixtures are file-scoped: a file gets one database cloned from the
 * template, one BullMQ prefix and one app, made the first time a hook or test asks for them and closed
 * after the file's last test, in reverse order of making (pools, then env, then the stand-ins).
 *
 * A file states its needs once, at the top level, and its tests and hooks take the world from their context:
 *
 *     it.override('options', { env: { RATE_READS_BURST: '3' }, pools: ['shipments'] });
 *     it('…', async ({ env }) => …);
 *
 * Options that need a stand-in's address take it from its fixture, which is then closed after the env:
 * `it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }))`. A test may take just what it uses:
 * `it('…', async ({ api, tenant }) => …)`; never a copy in a file variable (test/architecture/test-fixtures.test.ts).
 */
export const test = base
  /** A real SMTP server on loopback (test/helpers/smtp-server.ts), made only when asked for. */
  .extend('smtp', { scope: 'file' }, async ({}, { onCleanup }) => {
    const smtp = await startTestSmtp();
    onCleanup(() => smtp.close());
    return smtp;
  })
  /** A scripted chat-completions server (test/helpers/fake-llm.ts), made only when asked for. */
  .extend('llm', { scope: 'file' }, async ({}, { onCleanup }) => {
    const llm = await startFakeLlm();
    onCleanup(() => llm.close());
    return llm;
  })
  /** A DNS server on loopback (test/helpers/dns-server.ts) our own sender check can ask, made only when asked for. */
  .extend('dns', { scope: 'file' }, async ({}, { onCleanup }) => {
    const dns = await startDnsStandIn();
    onCleanup(() => dns.close());
    return dns;
  })
  .extend('options', { scope: 'file' }, {} as FileOptions)
  .extend('env', { scope: 'file' }, async ({ options }, { onCleanup }) => {
    const { pools: _pools, ...envOptions } = options;
    const env = await setupTestEnv(envOptions);
    onCleanup(() => env.close());
    return env;
  })
  /** The file's `options.pools`, started with the file's world (auto) so no test runs before its workers. */
  .extend('pools', { scope: 'file', auto: true }, async ({ env, options }, { onCleanup }): Promise<Pools> => {
    if (!options.pools?.length) return { started: [], idle: [], close: async () => [] };
    const pools = await startPools(env.deps, options.pools);
    onCleanup(async () => {
      await pools.close();
    });
    return pools;
  })
  /** The env with the agent helpers (send, message, until); set `options` with agentOptions(). */
  .extend('agent', { scope: 'file' }, ({ env, pools }) => agentWorld(env, pools))
  /** The service's own inbound SMTP listener on a free loopback port, over the file's env; made only when asked for. */
  .extend('inbound', { scope: 'file' }, async ({ env }, { onCleanup }) => {
    const inbound = await startInboundSmtp(env.deps, { port: 0, host: '127.0.0.1' });
    onCleanup(() => inbound.close());
    return inbound;
  })
  .extend('db', { scope: 'file' }, ({ env }) => env.deps.db)
  .extend('queues', { scope: 'file' }, ({ env }) => env.deps.queues)
  .extend('api', { scope: 'file' }, ({ env }) => env.api)
  /** A fresh account with an all-scopes token, one per test. */
  .extend('tenant', async ({ env }) => env.tenant());

export const it = test;
