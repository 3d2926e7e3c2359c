import { describe, expect } from 'vitest';
import { startTurn } from '../helpers/agent.js';
import { requestDrain } from '../../src/agent/core/drain.js';
import { budgetDay, classifierBudget } from '../../src/agent/brains/llm/model-budget.js';
import { classifyReply } from '../../src/agent/replies/reply-classifier.js';
import { metrics } from '../../src/metrics/registry.js';
import { StatusResponse } from '../../api/routes/agent.schemas.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { completion, type FakeLlm, llmEnv } from '../helpers/fake-llm.js';
import { until } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { rows, turnRow } from '../helpers/rows.js';

/**
 * The daily model-call budget with the llm brain against a real chat-completions stand-in on loopback:
 * calls stop at the budget, `/agent/status` shows it spent, an event turned away is kept (due when the
 * budget resets) and runs then, a person's message fails saying why, and another account still calls.
 */
const BUDGET = 2;
it.override('options', ({ llm }) =>
  agentOptions(
    llmEnv(llm, {
      AGENT_MODEL_CALLS_PER_DAY: String(BUDGET),
    }),
  ),
);
it.beforeAll(({ llm }) => {
  llm.script(() => ({ body: completion('Noted.') }));
});

const callsOf = (llm: FakeLlm, accountId: string) =>
  llm.requests.filter((r) => r.body.messages.some((m) => typeof m.content === 'string' && m.content.includes(accountId))).length;

async function status(env: AgentEnv, token: string) {
  const res = await env.api().get('/api/v1/agent/status').set(auth(token));
  expect(res.status).toBe(200);
  return StatusResponse.parse(res.body).status;
}

const event = (env: AgentEnv, accountId: string, n: number) =>
  startTurn(env.deps, { accountId, kind: 'event', origin: 'hook', data: { label: 'crm', content: { account: accountId, n } } });

const finished = (env: AgentEnv, id: string) =>
  until(async () => {
    const t = await turnRow(env, id);
    return t.status === 'replied' || t.status === 'failed' ? t : null;
  }, 20_000);

describe('the daily model-call budget', () => {
  it('stops calling the model at the budget, shows it in /agent/status, and keeps the event it turned away', async ({
    agent: env,
    llm,
  }) => {
    const { token, accountId } = await env.tenant();
    expect((await status(env, token)).modelCalls).toMatchObject({ budget: BUDGET, used: 0, refused: 0, exhaustedAt: null });

    const turns = [];
    for (let n = 1; n <= 3; n++) turns.push(await finished(env, (await event(env, accountId, n)).turn.id));
    expect(turns.map((t) => t.status)).toEqual(['replied', 'replied', 'failed']);
    expect(callsOf(llm, accountId)).toBe(BUDGET);

    // The third was not lost: a copy waits for the next UTC day, with the same outside data.
    const { resetsAt } = budgetDay(Date.now());
    const copyId = /this input waits as (turn_\w+) until then/.exec(turns[2]!.failure)?.[1];
    expect(turns[2]!.failure).toContain(`daily budget of ${BUDGET} model calls is spent until ${new Date(resetsAt).toISOString()}`);
    const copy = await turnRow(env, copyId!);
    expect(copy).toMatchObject({ account_id: accountId, kind: 'event', origin: 'hook', status: 'queued', not_before: resetsAt });
    expect(copy.data).toEqual(turns[2]!.data);

    const s = await status(env, token);
    expect(s.modelCalls).toMatchObject({ budget: BUDGET, used: BUDGET, refused: 1, resetsAt });
    expect(s.modelCalls.exhaustedAt).toBeGreaterThanOrEqual(turns[1]!.started_at);

    // A person's message is not postponed: it fails saying why, still without a model call.
    const res = await env.send(token, { text: 'how are we doing?', waitSeconds: 10 });
    expect(res.body.message).toMatchObject({ status: 'failed' });
    expect(res.body.message.failure).toMatch(/daily budget of 2 model calls is spent until/);
    expect(callsOf(llm, accountId)).toBe(BUDGET);
    expect(await rows(env, 'agent_turns', { account_id: accountId, status: 'queued' })).toHaveLength(1);

    // Another account's budget is its own.
    const other = await env.tenant();
    expect((await finished(env, (await event(env, other.accountId, 1)).turn.id)).status).toBe('replied');
    expect(callsOf(llm, other.accountId)).toBe(1);

    // The day turns (the budget's row for it is fresh): the kept event runs and the model answers it.
    await env.deps.db('agent_model_calls').where({ account_id: accountId }).update({ calls: 0, refused: 0, exhausted_at: null });
    await env.deps.db('agent_turns').where({ id: copyId }).update({ not_before: Date.now() });
    // (Its own job waits for the real day's end; the sweep would pick it up, a drain asked now is sooner.)
    await requestDrain(env.deps, accountId, { why: 'more', at: Date.now() });
    expect((await finished(env, copyId!)).status).toBe('replied');
    expect(callsOf(llm, accountId)).toBe(BUDGET + 1);
  });

  it("counts the reply classifier's model calls too, and judges by the rules once the budget is spent", async ({ agent: env, llm }) => {
    const { token, accountId } = await env.tenant();
    const mayAsk = classifierBudget(env.deps, accountId);
    const asked = () => llm.requests.filter((r) => r.body.messages.some((m) => String(m.content).includes(`left it, ${accountId}`))).length;
    const judge = () => classifyReply(env.deps.config.agent, `Not for us, thanks. I left it, ${accountId}.`, 'Re: x', { mayAsk });
    for (let n = 0; n < BUDGET; n++) expect((await judge()).rule).toMatch(/the model answered no known reply kind/);
    expect(asked()).toBe(BUDGET);
    const refusalsBefore = (await metrics.llmBudgetRefusals.get()).values[0]?.value ?? 0;
    const third = await judge();
    // The process's refusal counter counts the classifier's refusal as it counts a turn's.
    expect((await metrics.llmBudgetRefusals.get()).values[0]?.value).toBe(refusalsBefore + 1);
    expect(third.rule).toMatch(/\(the account's daily model budget is spent\)$/);
    expect(third.replyKind).toBe('not_interested');
    expect(asked()).toBe(BUDGET);
    expect((await status(env, token)).modelCalls).toMatchObject({ budget: BUDGET, used: BUDGET, refused: 1 });
  });
});
