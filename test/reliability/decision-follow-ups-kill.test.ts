import { spawn } from 'node:child_process';
import { describe, expect } from 'vitest';
import { WorkflowResponse } from '../../api/routes/workflows.schemas.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { fireRun } from '../../src/workflows/runs.service.js';
import { startPools } from '../../workers/main.js';
import { gate } from '../helpers/db-holds.js';
import { envFor } from '../helpers/env.js';
import { CHALLENGER, proposeSubjectTest, subjectTestAudience, winnerCard } from '../helpers/experiments.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { ROOT, waitFor } from '../helpers/processes.js';
import { workerProcesses } from '../helpers/worker-processes.js';
import { auth } from '../helpers/auth.js';
import { eventsOfCard, row, rows } from '../helpers/rows.js';

/**
 * A decision's follow-ups survive kill -9 (docs/architecture.md, "Events"). Three decisions, each made by a process
 * of its own through the review service (test/helpers/decide.ts) that is killed after the decision and its
 * `card.decided` event committed and before the delivery was queued: an experiment's winner approved, an
 * experiment's proposal dismissed, a workflow's gate approved. Then a worker process (card-timers and maintenance
 * pools) finds the events by the maintenance sweep and runs each follow-up, and is itself killed after each
 * follow-up's effect committed and before the outbox noted it; a second worker runs them again. Every follow-up
 * happens exactly once: the winner adopted once, the proposal dismissed once, the gated step run once.
 */
it.override('options', { env: { WORKFLOW_POLL_MS: '50' } });

/** The worker processes: a sweep that queues any undelivered event at once, and a killed job retried within seconds. */
const WORKER_ENV = { MAINTENANCE_SWEEP_MS: '200', EVENTS_SWEEP_AFTER_MS: '0', JOBS_LOCK_MS: '2000', JOBS_STALLED_INTERVAL_MS: '1000' };

/** Decides the card in a process of its own, which waits after the commit; kill -9 once its event is in the outbox. */
async function decideAndDie(env: TestEnv, verb: 'approve' | 'dismiss', accountId: string, cardId: string): Promise<{ eventId: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/decide.ts', verb, accountId, cardId], {
    cwd: ROOT,
    env: { ...process.env, ...envFor(env.config), EVENTS_PAUSE_BEFORE_QUEUE_MS: '600000' },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let eventId = '';
  await waitFor(
    async () => {
      const [found] = await eventsOfCard(env, cardId);
      eventId = found?.id ?? '';
      return Boolean(found);
    },
    `the decision on ${cardId} committed`,
    60_000,
  );
  child.kill('SIGKILL');
  await exited;
  expect(child.signalCode).toBe('SIGKILL');
  return { eventId };
}

describe('kill -9 between a decision and its follow-ups', () => {
  it('adopts the winner once, dismisses the proposal once and runs the gated step once', async ({ env }) => {
    const db = env.deps.db;
    const { accountId, token } = await env.tenant();
    await subjectTestAudience(db, accountId, 'kill');
    const won = await proposeSubjectTest(db, accountId, 'onboarding');
    const dropped = await proposeSubjectTest(db, accountId, 'renewals');
    const winner = await winnerCard(db, accountId, won.id);
    const created = await env
      .api()
      .post('/api/v1/workflows')
      .set(auth(token))
      .send({ name: 'Gated', scheduleText: 'weekly', steps: [{ title: 'ask first', gate: { on: true } }, { title: 'then act' }] });
    expect(created.status).toBe(201);
    const workflowId = WorkflowResponse.parse(created.body).workflow.workflowId;
    const pools = await startPools(env.deps, ['agent-turns', 'workflow-runs']);
    const workers = workerProcesses(env);
    try {
      const opts = { ...env.config.workflows, stepTimeoutMs: 20_000, pollMs: 50 };
      const waiting = (await fireRun(env.deps, workflowId, 'job-kill-gate', Date.now(), opts))!;
      const gateCard = waiting.steps[0]!.cardId!;
      const run = async () => (await row(env, 'workflow_runs', { id: waiting.runId })) as { status: string; steps: { outcome: string }[] };

      // 1. Each deciding process dies after its commit: the decisions stand, nothing followed, nothing is queued.
      const refs = [
        await decideAndDie(env, 'approve', accountId, winner.id),
        await decideAndDie(env, 'dismiss', accountId, dropped.cardId),
        await decideAndDie(env, 'approve', accountId, gateCard),
      ];
      const cards = await rows(env, 'review_cards').whereIn('id', [winner.id, dropped.cardId, gateCard]).pluck('status');
      expect(cards.sort()).toEqual(['dismissed', 'resolved', 'resolved']);
      for (const r of refs) expect(await pendingJob(env.deps.queues.get('card-timers')!, `event-${r.eventId}`)).toBeUndefined();
      const events = refs.map((r) => r.eventId);
      const repo = experimentsRepository(db);
      expect((await repo.get(accountId, won.id))!.adoptedAt).toBeNull();
      expect((await repo.get(accountId, dropped.id))!.status).toBe('proposed');
      expect((await run()).steps.map((s) => s.outcome)).toEqual(['waiting_for_gate', 'pending']);

      // 2. The sweep queues them; each follow-up's effect commits, and its worker dies before the outbox notes it.
      const noted = (area: string) => `'${area}' = ANY(NEW.handled) AND NOT '${area}' = ANY(OLD.handled)`;
      const notes = await gate(
        env,
        'events_outbox',
        `(NEW.payload->>'sourceType' LIKE 'experiment%' AND ${noted('experiments')}) OR ` +
          `(NEW.payload->>'sourceType' = 'workflow_gate' AND ${noted('workflows')})`,
        'UPDATE',
      );
      const first = await workers.start(WORKER_ENV, ['card-timers', 'maintenance']);
      const atGate = async () =>
        Number(
          (
            await db.raw(
              `SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = ` +
                `(SELECT oid FROM pg_database WHERE datname = current_database())`,
            )
          ).rows[0].n,
        );
      await waitFor(async () => (await atGate()) >= 3, 'all three follow-ups done and waiting to be noted', 60_000);
      const adopted = (await repo.get(accountId, won.id))!;
      expect(adopted.adoptedAt).not.toBeNull();
      const dismissed = (await repo.get(accountId, dropped.id))!;
      expect(dismissed.status).toBe('dismissed');
      await first.kill();
      await notes.open();

      // 3. A second worker runs them again (the killed jobs, or the sweep's): every one is noted, none acts twice.
      await workers.start(WORKER_ENV, ['card-timers', 'maintenance']);
      await waitFor(
        async () => (await rows(env, 'events_outbox').whereIn('id', events).whereNull('done_at')).length === 0,
        'delivery',
        60_000,
      );
      await waitFor(async () => (await run()).status === 'done', 'the gated run to finish', 60_000);

      const outbox = await rows(env, 'events_outbox').whereIn('id', events);
      for (const r of outbox) expect([...r.handled].sort()).toEqual(['experiments', 'workflows']);
      expect((await repo.get(accountId, won.id))!.adoptedAt).toBe(adopted.adoptedAt);
      const defaults = await rows(env, 'experiment_defaults', { account_id: accountId });
      expect(defaults).toHaveLength(1);
      expect(defaults[0]).toMatchObject({ thing: 'mail_subject', value: CHALLENGER, experiment_id: won.id });
      expect(Number(defaults[0].adopted_at)).toBe(adopted.adoptedAt);
      const again = (await repo.get(accountId, dropped.id))!;
      expect(again).toMatchObject({ status: 'dismissed', decidedAt: dismissed.decidedAt });
      expect((await run()).steps.map((s) => s.outcome)).toEqual(['done', 'done']);
      // One turn per step: the gated step was continued once.
      expect(await rows(env, 'agent_turns', { account_id: accountId }).pluck('id')).toHaveLength(2);
    } finally {
      await workers.stopAll();
      await pools.close();
    }
  }, 300_000);
});
