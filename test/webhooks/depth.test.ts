import { describe, expect } from 'vitest';
import { jsonbSafe } from '../../src/webhooks/events.service.js';
import { MAX_JSON_DEPTH } from '../../src/webhooks/webhooks.types.js';
import { deliveryRows, expectError, makeHook, postRaw } from './helpers.js';
import { hookIt, hookWorldOptions } from './helpers-agent.js';

const it = hookIt;

// A 202 means the event reaches the agent. JSON nested thousands deep (well under 64,000 bytes) used to
// be accepted, then fail every try of its job on "Maximum call stack size exceeded" and be lost.

it.override('options', hookWorldOptions({ AGENT_BRAIN: 'offline' }));

const DEPTH_RULE = `body must not nest arrays and objects more than ${MAX_JSON_DEPTH} levels deep`;
const nested = (depth: number, inner: string) => `${'['.repeat(depth)}${inner}${']'.repeat(depth)}`;

describe('webhook bodies nested deeper than intake takes', () => {
  it('refuses 65 to 31,000 levels with a 400 naming the rule, logging nothing', async ({ hooks: env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'deep');
    for (const depth of [MAX_JSON_DEPTH + 1, 4_000, 31_000]) {
      const text = nested(depth, '1');
      expect(Buffer.byteLength(text)).toBeLessThan(64_000);
      expectError(await postRaw(env, hook.path, text), 400, DEPTH_RULE);
      expectError(await postRaw(env, hook.path, `{"a":${nested(depth - 1, '{}')}}`), 400, DEPTH_RULE);
    }
    expect(await deliveryRows(env, hook.hookId)).toEqual([]);
  });

  it('accepts a body at the limit and hands it to the agent whole', async ({ hooks: env }) => {
    const { accountId } = await env.tenant();
    const hook = await makeHook(env, accountId, 'deep');
    const text = `{"order":${nested(MAX_JSON_DEPTH - 1, '"\\u0000 last"')}}`;
    const res = await postRaw(env, hook.path, text);
    expect(res.status).toBe(202);
    const turn = await env.settled(res.body.deliveryId);
    expect(turn.status).toBe('replied');
    let inner: unknown = (turn.data as { content: { order: unknown } }).content.order;
    for (let i = 0; i < MAX_JSON_DEPTH - 1; i++) inner = (inner as unknown[])[0];
    expect(inner).toBe('\uFFFD last');
  });
});

describe('jsonbSafe (what the webhook-events job stores for the agent)', () => {
  it('walks any depth without recursion: a body deeper than intake takes (logged before the rule) is handed as its text', () => {
    const text = nested(31_000, '"a\\u0000"');
    expect(jsonbSafe(JSON.parse(text), text)).toBe(text);
    const shallow = '{"k\\u0000":["x\\ud800",{"__proto__":1}]}';
    const safe = jsonbSafe(JSON.parse(shallow), shallow) as Record<string, unknown[]>;
    expect(safe).toEqual({ 'k\uFFFD': ['x\uFFFD', JSON.parse('{"__proto__":1}')] });
    expect(Object.getPrototypeOf(safe['k\uFFFD']![1])).toBe(Object.prototype);
    expect(Object.keys(safe['k\uFFFD']![1]!)).toEqual(['__proto__']);
  });
});
