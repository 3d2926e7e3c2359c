import { expect, inject } from 'vitest';
import { isCluster } from '../../src/redis.js';
import { it } from '../helpers/fixture.js';

/**
 * Imported first by a cluster variant (`*.cluster.test.ts`): every configuration the file then builds
 * (configWith, and the child processes it starts, which inherit this environment) runs on this run's
 * Redis Cluster, started by test/global-setup.ts. The variant then imports the tests it runs again.
 */
process.env.REDIS_CLUSTER_NODES = inject('redisClusterNodes');

it('runs this file on the Redis Cluster: three masters, a cluster client', async ({ env }) => {
  expect(isCluster(env.deps.redis)).toBe(true);
  expect(env.config.redisClusterNodes).toHaveLength(6);
  if (isCluster(env.deps.redis)) expect(env.deps.redis.nodes('master')).toHaveLength(3);
});
