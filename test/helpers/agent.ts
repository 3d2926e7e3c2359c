import { type AgentDeps, dispatchTurn, type Recorded, recordTurn, type TurnInput } from '../../src/agent/messages/agent.service.js';
import { isCluster, keyspace } from '../../src/redis.js';
import { startPools, type Pools } from '../../workers/main.js';
import { setupTestEnv, type TestEnv } from './env.js';
import { auth } from './auth.js';

/**
 * `recordTurn` then `dispatchTurn`, for a test with nothing else to write in the turn's transaction. The
 * service's own doors record their turns in the transaction of their other writes (`recordTurn`,
 * `recordTurns`) and dispatch after commit (`dispatchTurn`, `dispatchTurns`).
 */
export async function startTurn(deps: AgentDeps, input: TurnInput): Promise<Recorded> {
  const recorded = await deps.db.transaction((trx) => recordTurn(trx, deps.config, input));
  await dispatchTurn(deps, recorded);
  return recorded;
}

/**
 * Closes this process's turn-bus subscriber from the Redis side, as a Redis restart or a network
 * break would. Only ours: it is found by its connection name. Returns how many it closed.
 */
export async function killTurnBusSubscriber(env: Pick<TestEnv, 'config' | 'deps'>): Promise<number> {
  const name = `${keyspace(env.config.queuePrefix)}-turn-bus-${process.pid}`;
  // On a cluster the subscriber is on one node of several: each is asked.
  const nodes = isCluster(env.deps.redis) ? env.deps.redis.nodes('all') : [env.deps.redis];
  let closed = 0;
  for (const node of nodes) {
    const list = (await node.client('LIST')) as string;
    const ids = list
      .split('\n')
      .filter((line) => line.includes(` name=${name} `))
      .map((line) => /^id=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => Boolean(id));
    for (const id of ids) await node.client('KILL', 'ID', id);
    closed += ids.length;
  }
  return closed;
}

export interface AgentEnv extends TestEnv {
  pools: Pools;
  /** POST /agent/messages as `token`. */
  send(token: string, body: unknown): ReturnType<ReturnType<TestEnv['api']>['post']>;
  /** Tells the agent `text` as `token` and waits (up to 10 s) for its answer; throws unless it replied. */
  say(token: string, text: string): Promise<{ replies: { text: string }[] }>;
  /** GET /agent/messages/{id} body.message, as `token`. */
  message(
    token: string,
    requestId: string,
  ): Promise<{ status: string; replies: { text: string; at: number }[]; interrupted: boolean; failure?: string; text: string }>;
  /** Polls GET /agent/messages/{id} until `check` holds. */
  until(
    token: string,
    requestId: string,
    check: (m: Awaited<ReturnType<AgentEnv['message']>>) => boolean,
    timeoutMs?: number,
  ): Promise<Awaited<ReturnType<AgentEnv['message']>>>;
}

/** Options for a file whose agent turns run in-process (the shared fixture's `options`; the `agent` fixture reads them). */
export function agentOptions(env: Record<string, string> = {}, pools: ('agent-turns' | 'maintenance')[] = ['agent-turns']) {
  return { env: { AGENT_WAIT_POLL_MS: '200', ...env }, pools };
}

/** The agent helpers over a test world whose pools are running. Closing it closes `base`. */
export function agentWorld(base: TestEnv, running: Pools): AgentEnv {
  const self: AgentEnv = {
    ...base,
    pools: running,
    send: (token, body) =>
      base
        .api()
        .post('/api/v1/agent/messages')
        .set(auth(token))
        .send(body as object),
    async say(token, text) {
      const res = await self.send(token, { text, waitSeconds: 10 });
      if (res.status !== 200 || res.body.message?.status !== 'replied') {
        throw new Error(`the agent did not reply to "${text}": ${res.status} ${JSON.stringify(res.body).slice(0, 500)}`);
      }
      return res.body.message;
    },
    async message(token, requestId) {
      const res = await base.api().get(`/api/v1/agent/messages/${requestId}`).set(auth(token));
      if (res.status !== 200) throw new Error(`GET message answered ${res.status}`);
      return res.body.message;
    },
    async until(token, requestId, check, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      let last = await self.message(token, requestId);
      while (!check(last)) {
        if (Date.now() > deadline) throw new Error(`timed out; last state ${JSON.stringify(last)}`);
        await new Promise((r) => setTimeout(r, 50));
        last = await self.message(token, requestId);
      }
      return last;
    },
  };
  return self;
}

/** A test world with the real agent-turns (and, when asked, maintenance) pool running in this process. */
export async function setupAgentEnv(
  env: Record<string, string> = {},
  pools: ('agent-turns' | 'maintenance')[] = ['agent-turns'],
): Promise<AgentEnv> {
  const options = agentOptions(env, pools);
  const base = await setupTestEnv({ env: options.env });
  const running = await startPools(base.deps, options.pools);
  return {
    ...agentWorld(base, running),
    async close() {
      await running.close();
      await base.close();
    },
  };
}
