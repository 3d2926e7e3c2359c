import { describe, expect } from 'vitest';
import { revokeToken } from '../../src/tokens/tokens.service.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { cancelHeard, gate, lit } from '../helpers/db-holds.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

// Ordered by events, not by how long a step takes: a gate holds every step of one account's turns (at
// its step record, before the step's effect) until the test opens it.
it.override('options', agentOptions({ AGENT_STEP_DELAY_MS: '0' }));

/** A gate on the steps of `accountId`'s turns; `reached()` once a turn waits at it with its first step. */
const stepsGate = (env: AgentEnv, accountId: string) =>
  gate(env, 'agent_turn_steps', `EXISTS (SELECT 1 FROM agent_turns t WHERE t.id = NEW.turn_id AND t.account_id = ${lit(accountId)})`);

describe('interrupt', () => {
  it('stops the running turn between steps when a new message arrives; the stopped one ends with interrupted: true', async ({
    agent: env,
  }) => {
    const { token, accountId } = await env.tenant();
    const steps = await stepsGate(env, accountId);
    try {
      const first = await env.send(token, { text: 'tell me something long' });
      await steps.reached();
      const cancel = await cancelHeard(env, first.body.requestId);
      const pending = env.send(token, { text: 'never mind, this instead', waitSeconds: 20 }).then((r) => r);
      await cancel.heard;
      await cancel.close();
      await steps.open();
      const second = await pending;
      expect(second.status).toBe(200);
      expect(second.body.message).toMatchObject({ status: 'replied', interrupted: false });
      const stopped = await env.until(token, first.body.requestId, (m) => m.status === 'failed');
      expect(stopped).toMatchObject({ interrupted: true, failure: 'interrupted by a later message' });
      // It stopped before finishing its plan (the offline brain plans two bubbles for this text): only
      // the step held at the gate went through.
      expect(stopped.replies.length).toBe(1);
    } finally {
      await steps.open();
    }
  });

  it('shows running: true and sandbox alive while a turn runs', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const steps = await stepsGate(env, accountId);
    try {
      const sent = await env.send(token, { text: 'status check' });
      await steps.reached();
      const res = await env.api().get('/api/v1/agent/status').set(auth(token));
      expect(res.body.status).toMatchObject({ sandbox: 'alive', running: true });
      await steps.open();
      await env.until(token, sent.body.requestId, (m) => m.status === 'replied');
      const after = await env.api().get('/api/v1/agent/status').set(auth(token));
      expect(after.body.status).toMatchObject({ sandbox: 'dead', running: false });
    } finally {
      await steps.open();
    }
  });

  it('answers 202 with the last state seen when waitSeconds runs out first', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const steps = await stepsGate(env, accountId);
    try {
      const res = await env.send(token, { text: 'slow one', waitSeconds: 0 });
      expect(res.status).toBe(202);
      expect(['queued', 'running']).toContain(res.body.message.status);
      expect(res.body.waitEnded).toBeUndefined();
    } finally {
      await steps.open();
    }
  });
});

describe('queue: true', () => {
  it('waits behind current work without stopping it, and runs in order', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const steps = await stepsGate(env, accountId);
    try {
      const a = await env.send(token, { text: 'first' });
      await steps.reached();
      const b = await env.send(token, { text: 'second', queue: true });
      const c = await env.send(token, { text: 'third', queue: true });
      const last = await env.send(token, { text: 'third', queue: true, clientRequestId: 'q3' });
      expect(last.status).toBe(202);
      expect((await env.message(token, a.body.requestId)).status).toBe('running');
      await steps.open();
      for (const r of [a, b, c, last]) await env.until(token, r.body.requestId, (m) => m.status === 'replied', 20_000);
      const found = await rows(env, 'agent_turns', { account_id: accountId }).orderBy('started_at');
      expect(found.map((r) => r.text)).toEqual(['first', 'second', 'third', 'third']);
      expect(found.every((r) => !r.interrupted)).toBe(true);
      for (let i = 1; i < found.length; i++) expect(Number(found[i].started_at)).toBeGreaterThanOrEqual(Number(found[i - 1].finished_at));
    } finally {
      await steps.open();
    }
  });
});

describe('interrupt: false', () => {
  it('sends nothing while the newest message is unfinished and names it (202, and on 400 and 409 too)', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const steps = await stepsGate(env, accountId);
    try {
      const a = await env.send(token, { text: 'working on it' });
      await steps.reached();
      const held = await env.send(token, { text: 'are you done?', interrupt: false });
      expect(held.status).toBe(202);
      expect(held.body).toMatchObject({
        requestId: a.body.requestId,
        deduplicated: false,
        notSent: true,
        message: { requestId: a.body.requestId, text: 'working on it' },
      });
      const tooLong = await env.send(token, { text: 'x'.repeat(4_001), interrupt: false });
      expect(tooLong.status).toBe(409);
      expect(tooLong.body).toMatchObject({
        error: 'rejected',
        notSent: true,
        requestId: a.body.requestId,
        message: { requestId: a.body.requestId },
      });
      const badWait = await env.send(token, { text: 'x', interrupt: false, waitSeconds: 500 });
      expect(badWait.status).toBe(400);
      expect(badWait.body).toMatchObject({
        error: 'waitSeconds must be an integer from 0 to 120',
        notSent: true,
        requestId: a.body.requestId,
      });
      expect(await rows(env, 'agent_turns', { account_id: accountId })).toHaveLength(1);
      await steps.open();
      // The running turn was not interrupted.
      const done = await env.until(token, a.body.requestId, (m) => m.status === 'replied');
      expect(done.interrupted).toBe(false);
      const now = await env.send(token, { text: 'now?', interrupt: false, waitSeconds: 20 });
      expect(now.status).toBe(200);
      expect(now.body.notSent).toBeUndefined();
    } finally {
      await steps.open();
    }
  });

  it('without an unfinished message, a bad request is a plain 400', async ({ agent: env }) => {
    const { token } = await env.tenant();
    const res = await env.send(token, { text: '', interrupt: false });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'text must not be empty' });
  });
});

describe('waitSeconds and revocation', () => {
  it('ends the wait with waitEnded unauthorized and no message when the token is revoked mid-wait', async ({ agent: env }) => {
    const { token, tokenId, accountId } = await env.tenant();
    // The turn cannot finish while the gate is shut, so only the revocation can end this wait early.
    const steps = await stepsGate(env, accountId);
    try {
      const pending = env.send(token, { text: 'long wait', waitSeconds: 30 }).then((r) => r);
      await steps.reached();
      await revokeToken(env.deps, tokenId);
      const res = await pending;
      expect(res.status).toBe(202);
      expect(res.body).toEqual({ requestId: expect.any(String), deduplicated: false, waitEnded: 'unauthorized' });
      const after = await env.api().get('/api/v1/agent/status').set(auth(token));
      expect(after.status).toBe(401);
    } finally {
      await steps.open();
    }
  });
});
