import { agentDoors } from '../../workers/agent-turns.js';
import { describe, expect } from 'vitest';
import { recordTurn } from '../../src/agent/messages/agent.service.js';
import { drainAccount } from '../../src/agent/turns/turn-runner.js';
import { withAccountLock } from '../../src/agent/turns/turn-lock.js';
import { buildTurn } from '../helpers/factories.js';
import { agentOptions, it } from '../helpers/fixture.js';
import { rows, turnRow, row } from '../helpers/rows.js';

// The turn path's merged statements (record, claim, reply, finish): what each one writes together.
// A pool of three connections, so the last test can ask every connection the pool has.
it.override('options', agentOptions({ DATABASE_POOL_MAX: '3', AGENT_TURN_CONCURRENCY: '2' }));

describe('turn statements', () => {
  it('records a plain message, its activity and its audit row in one statement', async ({ agent: env }) => {
    const { token, accountId, tokenId } = await env.tenant();
    const res = await env.send(token, { text: 'hello there', waitSeconds: 10 });
    expect(res.status).toBe(200);
    // Written with the message as 202; the request waited and answered 200, so the row says 200.
    const audit = await rows(env, 'audit_log', { account_id: accountId, target_id: res.body.requestId });
    expect(audit).toMatchObject([
      { actor: 'api', token_id: tokenId, token_label: 'test', method: 'POST', route: '/api/v1/agent/messages', status: 200 },
    ]);
    const state = await row(env, 'agent_state', { account_id: accountId });
    expect(Number(state.last_turn_at)).toBeGreaterThan(0);
    expect(Number(state.last_activity_at)).toBeGreaterThanOrEqual(Number(state.last_turn_at));
    const turn = await turnRow(env, res.body.requestId);
    // The offline brain answers a plain message with two bubbles: each is a step, recorded with its bubble.
    expect(turn).toMatchObject({ status: 'replied', steps_done: 2, attempts: 1 });
    const steps = await rows(env, 'agent_turn_steps', { turn_id: res.body.requestId }).orderBy('idx');
    expect(steps.map((s) => [s.round, s.idx, s.result.name, s.result.ok])).toEqual([
      [0, 0, 'reply', true],
      [0, 1, 'reply', true],
    ]);
    expect(steps[0].round_calls).toHaveLength(2);
    expect(await rows(env, 'agent_replies', { turn_id: res.body.requestId })).toHaveLength(2);
  });

  it("writes nothing when the caller's transaction rolls back", async ({ agent: env }) => {
    const { accountId } = await env.tenant();
    await expect(
      env.deps.db.transaction(async (trx) => {
        await recordTurn(trx, env.config, { accountId, kind: 'event', origin: 'hook', data: { label: 'form', content: {} } });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await rows(env, 'agent_turns', { account_id: accountId })).toEqual([]);
    expect(await rows(env, 'agent_state', { account_id: accountId })).toEqual([]);
  });

  it('flags the running turn of the account when a new message arrives, and only that account', async ({ agent: env }) => {
    const { accountId } = await env.tenant();
    const other = await env.tenant();
    const [mine, theirs] = await Promise.all(
      [accountId, other.accountId].map((id) =>
        env.deps
          .db('agent_turns')
          .insert({
            id: `req_run_${id}`,
            account_id: id,
            kind: 'message',
            origin: 'dashboard',
            text: 'x',
            mode: 'interrupt',
            status: 'running',
            created_at: 1,
            not_before: 1,
            started_at: Date.now(),
          })
          .returning('id'),
      ),
    );
    const recorded = await env.deps.db.transaction((trx) => buildTurn(trx, env.config, accountId, { text: 'next' }));
    expect(recorded.interrupting).toEqual([mine![0]!.id]);
    expect((await turnRow(env, theirs![0]!.id)).interrupt_requested_at).toBeNull();
    await env.deps.db('agent_turns').whereIn('id', [mine![0]!.id, theirs![0]!.id, recorded.turn.id]).update({ status: 'failed' });
  });

  it('holds the account lock across connections, and after letting go tells whether a turn came in meanwhile', async ({ agent: env }) => {
    const { accountId } = await env.tenant();
    let second: Awaited<ReturnType<typeof withAccountLock>> | undefined;
    const first = await withAccountLock(env.deps.db, accountId, async () => {
      // Another connection cannot take it while it is held, and runs nothing.
      second = await withAccountLock(env.deps.db, accountId, async () => {
        throw new Error('must not run');
      });
      // A turn recorded meanwhile (its drain job would find the lock busy and leave it to the holder).
      await buildTurn(env.deps.db, env.config, accountId, { text: 'meanwhile' });
    });
    expect(second).toBeNull();
    expect(first).toEqual({ runnable: true });
    await env.deps.db('agent_turns').where({ account_id: accountId }).update({ status: 'failed' });
    expect(await withAccountLock(env.deps.db, accountId, async () => {})).toEqual({ runnable: false });
  });

  it('claims nothing while another connection holds the account, and runs the turn once it is free', async ({ agent: env }) => {
    const { accountId } = await env.tenant();
    const { turn } = await buildTurn(env.deps.db, env.config, accountId, { text: 'wait your turn' });
    await withAccountLock(env.deps.db, accountId, async () => {
      // The drain's lock attempt and first claim go as one query: the claim must not run without the lock.
      expect(await drainAccount(env.deps, accountId, env.deps.logger, agentDoors)).toBe(0);
      expect((await turnRow(env, turn.id)).status).toBe('queued');
    });
    expect(await drainAccount(env.deps, accountId, env.deps.logger, agentDoors)).toBe(1);
    expect((await turnRow(env, turn.id)).status).toBe('replied');
  });

  it('leaves every pooled connection committing synchronously after turns ran', async ({ agent: env }) => {
    const { token } = await env.tenant();
    for (let i = 0; i < 3; i++) expect((await env.send(token, { text: `turn ${i}`, waitSeconds: 10 })).status).toBe(200);
    // Hold all three connections of the pool at once, so each one is asked.
    const settings = await env.deps.db.transaction(async (a) =>
      env.deps.db.transaction(async (b) =>
        Promise.all(
          [a, b, env.deps.db].map(
            async (q) =>
              ((await q.raw('SHOW synchronous_commit')) as { rows: { synchronous_commit: string }[] }).rows[0]!.synchronous_commit,
          ),
        ),
      ),
    );
    expect(settings).toEqual(['on', 'on', 'on']);
  });
});
