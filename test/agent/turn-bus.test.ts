import { describe, expect } from 'vitest';
import { publishCancel, publishDone, publishFinished, turnBus } from '../../src/agent/core/agent.bus.js';
import type { MessageView } from '../../src/agent/core/agent.types.js';
import { killTurnBusSubscriber } from '../helpers/agent.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';

const bus = (env: TestEnv) => turnBus(env.config, env.deps.redis);
const subscribed = (env: TestEnv) => waitFor(async () => bus(env).mark() >= 0, 'turn bus subscribed', 5_000);

describe('turn bus', () => {
  it('carries the finished message on the done notice, and a bare id from expiry and recovery', async ({ env }) => {
    await subscribed(env);
    const view: MessageView = {
      requestId: 'req_bus1',
      status: 'replied',
      text: 'hi',
      sentAt: 1,
      replies: [{ text: 'hello', at: 2 }],
      interrupted: false,
    };
    const heard: [string, MessageView | null][] = [];
    const off = bus(env).onDone('req_bus1', (id, v) => heard.push([id, v]));
    await publishFinished(env.deps.redis, env.config, view);
    await publishDone(env.deps.redis, env.config, ['req_bus1']);
    await waitFor(async () => heard.length === 2, 'both notices', 5_000);
    off();
    // Both notices, in either order: on a Redis Cluster two PUBLISHes may reach the subscriber's node by
    // different nodes (a bare id only sends the listener to Postgres, so the order carries no meaning).
    expect(heard).toHaveLength(2);
    expect(heard).toEqual(
      expect.arrayContaining([
        ['req_bus1', view],
        ['req_bus1', null],
      ]),
    );
  });

  it('remembers a cancel that arrived before anyone listened for it', async ({ env }) => {
    await subscribed(env);
    expect(bus(env).cancelled('turn_bus2')).toBe(false);
    await publishCancel(env.deps.redis, env.config, ['turn_bus2']);
    await waitFor(async () => bus(env).cancelled('turn_bus2'), 'cancel remembered', 5_000);
    expect(bus(env).cancelled('turn_other')).toBe(false);
  });

  it('reports a break in the subscription, and hears cancels again once it has subscribed anew', async ({ env }) => {
    await subscribed(env);
    const before = bus(env).mark();
    expect(bus(env).heardSince(before)).toBe(true);
    expect(await killTurnBusSubscriber(env)).toBe(1);
    await waitFor(async () => !bus(env).heardSince(before), 'break noticed', 5_000);
    // A mark taken before the break never counts as heard again, even after the subscriber is back.
    await subscribed(env);
    expect(bus(env).heardSince(before)).toBe(false);
    const after = bus(env).mark();
    expect(bus(env).heardSince(after)).toBe(true);
    await publishCancel(env.deps.redis, env.config, ['turn_bus3']);
    await waitFor(async () => bus(env).cancelled('turn_bus3'), 'cancel heard after the break', 5_000);
  });
});
