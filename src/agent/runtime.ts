import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../db.js';
import { enqueue } from '../jobs/registry.js';
import { agentTurn } from '../jobs/agent-turn.job.js';
import type { Logger } from '../logger.js';
import { cardsRepository } from '../review/cards.repository.js';
import type { Runtime } from '../runtime.js';
import { publishDone, turnBus } from './agent.bus.js';
import { FAILURES, type Turn } from './agent.types.js';
import { BrainError, type Brain, type BrainContext, type ToolCall, type ToolResult } from './brain.js';
import { createLlmBrain } from './llm-brain.js';
import { offlineBrain } from './offline-brain.js';
import { executeTool } from './tools.js';
import { turnsRepository } from './turns.repository.js';

/** Namespace of the per-account advisory lock (the other key is hashtext(account id)). */
const LOCK_NAMESPACE = 7301;
/** Turns one job runs before handing the account to a fresh job, so one busy account cannot hog a worker. */
const TURNS_PER_JOB = 20;
const MAX_ROUNDS = 6;

export function brainFor(rt: Pick<Runtime, 'config'>): Brain {
  return rt.config.agent.brain === 'llm' ? createLlmBrain(rt.config.agent.llm) : offlineBrain;
}

/**
 * Runs `fn` while holding the account's turn lock: a transaction-scoped Postgres advisory lock, so it
 * holds across processes and dies with the connection (a killed worker frees it). Returns false at
 * once when another worker holds it.
 */
export async function withAccountLock(db: Db, accountId: string, fn: () => Promise<void>): Promise<boolean> {
  return db.transaction(async (trx) => {
    const { rows } = (await trx.raw('SELECT pg_try_advisory_xact_lock(?, hashtext(?)) AS got', [LOCK_NAMESPACE, accountId])) as {
      rows: { got: boolean }[];
    };
    if (!rows[0]?.got) return false;
    await fn();
    return true;
  });
}

class Interrupted extends Error {}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new Interrupted();
  if (ms > 0) await sleep(ms, undefined, { signal }).catch(() => undefined);
  if (signal.aborted) throw new Interrupted();
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let cached: Promise<T> | null = null;
  return () => (cached ??= load());
}

async function contextFor(rt: Runtime, turn: Turn): Promise<BrainContext> {
  const repo = turnsRepository(rt.db);
  const cards = cardsRepository(rt.db);
  return {
    accountId: turn.accountId,
    input: { kind: turn.kind, text: turn.text, data: turn.data },
    memory: await repo.memory(turn.accountId),
    history: once(() => repo.recentHistory(turn.accountId, turn.id, 5)),
    reviewQueue: once(async () => {
      const [waiting, count] = await Promise.all([cards.listWaiting(turn.accountId, 10), cards.countWaiting(turn.accountId)]);
      return { waiting: waiting.map((c) => ({ title: c.title, sourceType: c.sourceType, createdAt: c.createdAt })), count };
    }),
  };
}

/**
 * Runs one claimed turn to a terminal status. The brain proposes tool calls; this executes them one
 * step at a time, checking the cancellation signal (a later message) before each step.
 */
async function runTurn(rt: Runtime, turn: Turn, brain: Brain, log: Logger): Promise<void> {
  const repo = turnsRepository(rt.db);
  const abort = new AbortController();
  const off = turnBus(rt.config, rt.redis).onCancel(turn.id, () => abort.abort());
  const delay = rt.config.agent.stepDelayMs;
  let outcome: { status: 'replied' | 'failed'; failure?: string; interrupted?: boolean } = { status: 'replied' };
  try {
    // The notice may have gone out before we subscribed; the flag in Postgres does not get lost.
    const [flagged, , ctx] = await Promise.all([
      repo.interruptRequested(turn.accountId, turn.id),
      repo.touchState(turn.accountId, Date.now(), true),
      contextFor(rt, turn),
    ]);
    if (flagged) abort.abort();
    const transcript: { calls: ToolCall[]; results: ToolResult[] }[] = [];
    let steps = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      await pause(delay, abort.signal);
      const step = await brain.step(ctx, transcript, abort.signal);
      const results: ToolResult[] = [];
      for (const call of step.calls) {
        if (++steps > rt.config.agent.maxSteps) break;
        await pause(delay, abort.signal);
        // Recorded before the first tool runs, not after: from the moment a tool may take effect, a
        // crashed turn must never run again (a kill between a tool's write and this record used to
        // re-run the turn and duplicate its card).
        if (steps === 1) await repo.stepDone(turn.accountId, turn.id);
        results.push(
          await executeTool(call, {
            db: rt.db,
            accountId: turn.accountId,
            turnId: turn.id,
            fromOutside: turn.kind === 'event' || turn.data !== null,
            onReply: (text) => repo.addReply(turn.accountId, turn.id, text, Date.now()),
          }),
        );
      }
      transcript.push({ calls: step.calls, results });
      if (step.done || !step.calls.length || steps > rt.config.agent.maxSteps) break;
    }
  } catch (err) {
    if (err instanceof Interrupted || abort.signal.aborted) outcome = { status: 'failed', failure: FAILURES.interrupted, interrupted: true };
    else if (err instanceof BrainError) outcome = { status: 'failed', failure: err.message };
    else {
      off();
      throw err;
    }
  }
  off();
  const at = Date.now();
  await Promise.all([repo.finish(turn.accountId, turn.id, outcome, at), repo.touchState(turn.accountId, at, false)]);
  log.info({ turnId: turn.id, status: outcome.status, interrupted: outcome.interrupted ?? false }, 'turn finished');
  await publishDone(rt.redis, rt.config, [turn.id]);
}

/**
 * A turn left `running` with nobody holding the lock belongs to a worker that died (kill -9, OOM).
 * One that had not done any step yet is queued again; one that had is failed, since its tool calls
 * may already have taken effect. Call only while holding the account's lock.
 */
async function recoverOrphans(rt: Runtime, accountId: string, log: Logger): Promise<void> {
  const repo = turnsRepository(rt.db);
  const finished: string[] = [];
  for (const turn of await repo.listRunning(accountId)) {
    if (turn.stepsDone === 0 && turn.attempts < 2 && (await repo.requeue(accountId, turn.id))) {
      log.warn({ turnId: turn.id }, 'turn orphaned before its first step; queued again');
      continue;
    }
    if (await repo.finish(accountId, turn.id, { status: 'failed', failure: FAILURES.workerLost }, Date.now())) finished.push(turn.id);
    log.warn({ turnId: turn.id }, 'turn orphaned mid-turn; failed');
  }
  await publishDone(rt.redis, rt.config, finished);
}

/**
 * Runs the account's queued turns in order (oldest first), one at a time. If another worker holds the
 * account, returns at once: the holder looks for new turns after it lets go, so none is stranded.
 */
export async function drainAccount(rt: Runtime, accountId: string, log: Logger, brain: Brain = brainFor(rt)): Promise<number> {
  const repo = turnsRepository(rt.db);
  let ran = 0;
  for (let pass = 0; pass < 3; pass++) {
    const got = await withAccountLock(rt.db, accountId, async () => {
      await recoverOrphans(rt, accountId, log);
      while (ran < TURNS_PER_JOB) {
        const turn = await repo.claimNext(accountId, Date.now());
        if (!turn) break;
        if (turn.mode === 'queue' && turn.expiresAt !== null && turn.expiresAt <= Date.now()) {
          await repo.finish(accountId, turn.id, { status: 'failed', failure: FAILURES.expired }, Date.now());
          await publishDone(rt.redis, rt.config, [turn.id]);
          continue;
        }
        await runTurn(rt, turn, brain, log);
        ran++;
      }
    });
    if (!got) return ran;
    if (ran >= TURNS_PER_JOB || !(await repo.hasRunnable(accountId, Date.now()))) break;
  }
  if (await repo.hasRunnable(accountId, Date.now())) await requestDrain(rt, accountId, `more-${accountId}-${Date.now()}`);
  return ran;
}

/** Asks the agent-turns pool to run the account's queued turns (idempotent per jobId). */
export async function requestDrain(rt: Pick<Runtime, 'queues'>, accountId: string, jobId: string, delay?: number): Promise<void> {
  await enqueue(rt.queues, agentTurn, { accountId }, { jobId, delay });
}
