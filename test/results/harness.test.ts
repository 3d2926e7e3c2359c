import { afterAll, describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { WorkflowResponse } from '../../api/routes/workflows.schemas.js';
import { newId } from '../../src/ids.js';
import type { HarnessMetrics } from '../../src/results/report/harness.repository.js';
import { getResults } from '../helpers/scoreboard.js';
import { setApproval } from '../../src/review/approval.service.js';
import { cardsRepository, type Card } from '../../src/review/cards/cards.repository.js';
import { autoResolve, sweepCards } from '../../src/shipping/after-approval.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { fireRun, type RunOptions } from '../../src/workflows/runs.service.js';
import { startPools, type Pools } from '../../workers/main.js';
import type { AgentEnv } from '../helpers/agent.js';
import { buildCard } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

/**
 * `/results` `harness`: the agent's own work, counted from its turns, cards and workflow runs. The window's
 * work is done for real (messages through the offline brain, a person's verbs through the API, the trust
 * ladder and the setting through the timers service, runs through the workflow runner); the baseline's
 * rows are written with their times set directly.
 */
// The agent-turns pool starts inside the first test: its first workflow run must fail for want of it.
let agentTurnsPool: Pools | null = null;
it.override('options', {
  env: {
    AGENT_WAIT_POLL_MS: '200',
    MAIL_TRANSPORT: 'local',
    MAIL_LOCAL_DIR: `/tmp/gas-harness-${process.pid}-${Date.now()}`,
    // Trusted at two approvals sent unchanged; the ladder's deadline is far off, so only the test resolves it.
    TRUST_AUTO_RESOLVE_AFTER: '2',
    TRUST_AUTO_RESOLVE_DELAY_MS: '3600000',
    RATE_WRITES_PER_MINUTE: '100000',
    RATE_WRITES_BURST: '100000',
    RATE_ACCOUNT_PER_MINUTE: '100000',
    RATE_ACCOUNT_BURST: '100000',
  },
});
afterAll(async () => {
  await agentTurnsPool?.close();
});

const HOUR = 3_600_000;
const MIN = 60_000;
const ZERO: HarnessMetrics = {
  turns: 0,
  cardsCreated: 0,
  approvedByPerson: 0,
  autoResolvedByTrustLadder: 0,
  resolvedBySetting: 0,
  dismissed: 0,
  workflowRunsSucceeded: 0,
  workflowRunsFailed: 0,
};

async function cardTo(env: AgentEnv, accountId: string, to: string): Promise<Card> {
  const row = await rows(env, 'review_cards', { account_id: accountId })
    .whereRaw("payload->>'to' = ?", [to])
    .first<{ id: string } | undefined>('id');
  if (!row) throw new Error(`no card to ${to}`);
  return (await cardsRepository(env.deps.db).find(accountId, row.id))!;
}

/** A turn row as the runner leaves it; `startedAt` null is a queued message that expired without running. */
const turnRow = (accountId: string, status: string, startedAt: number | null, finishedAt: number | null) => ({
  id: newId('turn'),
  account_id: accountId,
  kind: 'message',
  origin: 'api',
  text: 'earlier',
  status,
  created_at: (startedAt ?? finishedAt ?? Date.now()) - 1_000,
  not_before: (startedAt ?? finishedAt ?? Date.now()) - 1_000,
  started_at: startedAt,
  finished_at: finishedAt,
});

const runRow = (accountId: string, workflowId: string, status: string, finishedAt: number | null) => ({
  id: newId('run'),
  workflow_id: workflowId,
  account_id: accountId,
  job_id: newId('job'),
  status,
  workflow_version: 1,
  scheduled_for: (finishedAt ?? Date.now()) - MIN,
  started_at: (finishedAt ?? Date.now()) - MIN,
  finished_at: finishedAt,
  steps: '[]',
});

/** A card created at `createdAt`, left with `changes` (status, resolution, resolved_at). */
async function earlierCard(env: AgentEnv, accountId: string, createdAt: number, changes: Record<string, unknown> = {}) {
  const card = await buildCard(env.deps.db, accountId, 'plain');
  await env.deps
    .db('review_cards')
    .where({ id: card.id })
    .update({
      created_at: createdAt,
      updated_at: createdAt,
      ...changes,
      ...(changes.resolution ? { resolution: JSON.stringify(changes.resolution) } : {}),
    });
}

describe('GET /results harness', () => {
  it("counts the window's turns, cards, decisions and workflow runs apart from the baseline's", async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    const res = await env
      .api()
      .post('/api/v1/workflows')
      .set(auth(token))
      .send({ name: 'Daily hello', scheduleText: 'weekly', steps: [{ title: 'Say hello' }] });
    expect(res.status).toBe(201);
    const workflowId = WorkflowResponse.parse(res.body).workflow.workflowId;
    const opts: RunOptions = { ...env.config.workflows, stepTimeoutMs: 20_000, pollMs: 50 };

    // A run whose step's turn nobody runs in time: failed. Its turn runs once the pool starts.
    const failed = await fireRun(env.deps, workflowId, 'job-harness-fail', Date.now(), { ...opts, stepTimeoutMs: 300 });
    expect(failed?.status).toBe('failed');
    agentTurnsPool = await startPools(env.deps, ['agent-turns']);
    const open = async () =>
      Number(
        (
          await rows(env, 'agent_turns', { account_id: accountId })
            .whereIn('status', ['queued', 'running'])
            .count<{ n: string }[]>('* as n')
        )[0]!.n,
      );
    await waitFor(async () => (await open()) === 0, 'the failed run step turn to end', 15_000);
    expect((await fireRun(env.deps, workflowId, 'job-harness-ok', Date.now(), opts))?.status).toBe('done');

    // A person dismisses one draft, sends another, and approves a proposed workflow.
    await env.say(token, 'draft an email to bob@initech.test about a demo');
    const bob = await cardTo(env, accountId, 'bob@initech.test');
    expect((await env.api().post(`/api/v1/review/${bob.id}/dismiss`).set(auth(token)).send({ reason: 'not now' })).status).toBe(200);
    await env.say(token, 'draft an email to jane@initech.test about pricing');
    const jane = await cardTo(env, accountId, 'jane@initech.test');
    expect((await env.api().post(`/api/v1/review/${jane.id}/send`).set(auth(token)).send({})).status).toBe(200);
    await env.say(token, 'propose a workflow to research new signups every Monday morning');
    const proposal = await rows(env, 'review_cards', { account_id: accountId, source_type: 'workflow_proposal' }).first('id');
    const approved = await approveCard(env, token, proposal.id);
    expect(approved.status).toBe(200);

    // Trusted now (an unchanged send and one more): the next draft gets a deadline, and the ladder sends it.
    await raiseTrust(env.deps.db, accountId, 'email');
    await env.say(token, 'draft an email to kim@initech.test about the launch');
    // The agent's cards meet the ladder in the card-timers sweep.
    expect((await sweepCards(env.deps)).ladder).toBeGreaterThanOrEqual(1);
    const kim = await cardTo(env, accountId, 'kim@initech.test');
    expect(kim.autoResolveAt).not.toBeNull();
    expect(await autoResolve(env.deps, accountId, kim.id, kim.autoResolveAt!)).toBe('sent');

    // Email set to run without approval: the draft ships by the setting.
    await setApproval(env.deps.db, accountId, 'email', false);
    await env.say(token, 'draft an email to lee@initech.test about next steps');
    const lee = await cardTo(env, accountId, 'lee@initech.test');
    expect(await autoResolve(env.deps, accountId, lee.id, lee.autoResolveAt!)).toBe('sent');
    expect((await cardTo(env, accountId, 'lee@initech.test')).resolution).toMatchObject({ by: 'setting' });
    expect((await cardTo(env, accountId, 'kim@initech.test')).resolution).toMatchObject({ by: 'trust_ladder' });

    const now = Date.now();
    const since = now - HOUR;
    const inBaseline = since - 30 * MIN;
    const tooOld = since - 2 * HOUR;
    const later = now + 10 * MIN;
    /** A card made at `at`, decided (`status`, by `action` of `by`) in the baseline. */
    const decided = (at: number, status: string, action: string, by: string) =>
      earlierCard(env, accountId, at, { status, resolved_at: inBaseline, resolution: { action, by, at: inBaseline } });
    await env.deps
      .db('agent_turns')
      .insert([
        turnRow(accountId, 'replied', inBaseline - MIN, inBaseline),
        turnRow(accountId, 'failed', inBaseline - MIN, inBaseline),
        turnRow(accountId, 'failed', null, inBaseline),
        turnRow(accountId, 'replied', tooOld - MIN, tooOld),
        turnRow(accountId, 'replied', now - MIN, later),
      ]);
    await decided(inBaseline, 'resolved', 'answer', 'person');
    await decided(inBaseline, 'dismissed', 'dismiss', 'person');
    await decided(tooOld, 'sent', 'send', 'trust_ladder');
    await decided(inBaseline, 'sent', 'approve', 'setting');
    // A revision folded into the card it revises is not a card of its own, nor a decision.
    await decided(inBaseline, 'resolved', 'merged', 'system');
    await earlierCard(env, accountId, inBaseline);
    // On the window's first millisecond: the window's.
    await earlierCard(env, accountId, since);
    await earlierCard(env, accountId, later);
    await env.deps
      .db('workflow_runs')
      .insert([
        runRow(accountId, workflowId, 'done', inBaseline),
        runRow(accountId, workflowId, 'failed', inBaseline),
        runRow(accountId, workflowId, 'cancelled', inBaseline),
        runRow(accountId, workflowId, 'done', tooOld),
        runRow(accountId, workflowId, 'running', null),
      ]);

    const window: HarnessMetrics = {
      // Five messages, and the two runs' step turns.
      turns: 7,
      // Four drafts and the proposal, and the card made on the window's first millisecond.
      cardsCreated: 6,
      approvedByPerson: 2,
      autoResolvedByTrustLadder: 1,
      resolvedBySetting: 1,
      dismissed: 1,
      workflowRunsSucceeded: 1,
      workflowRunsFailed: 1,
    };
    const baseline: HarnessMetrics = {
      turns: 2,
      cardsCreated: 4,
      approvedByPerson: 1,
      autoResolvedByTrustLadder: 1,
      resolvedBySetting: 1,
      dismissed: 1,
      workflowRunsSucceeded: 1,
      workflowRunsFailed: 1,
    };
    expect((await getResults(env.deps.db, accountId, since, now)).harness).toEqual({ available: true, data: { window, baseline } });
    const body = await env.api().get('/api/v1/results').query({ since }).set(auth(token));
    expect(body.status).toBe(200);
    expect(ResultsResponse.parse(body.body).results.harness).toEqual({ available: true, data: { window, baseline } });
  });

  it("is available with zeros for an account whose agent did nothing, and never counts another account's work", async ({ agent: env }) => {
    agentTurnsPool ??= await startPools(env.deps, ['agent-turns']);
    const busy = await env.tenant();
    await env.say(busy.token, 'draft an email to ana@initech.test about a demo');
    const quiet = await env.tenant(['results:read']);
    const res = await env.api().get('/api/v1/results').set(auth(quiet.token));
    expect(res.status).toBe(200);
    expect(ResultsResponse.parse(res.body).results.harness).toEqual({ available: true, data: { window: ZERO, baseline: ZERO } });
    const mine = (await getResults(env.deps.db, busy.accountId, undefined)).harness.data.window;
    expect(mine).toEqual({ ...ZERO, turns: 1, cardsCreated: 1 });
  });
});
