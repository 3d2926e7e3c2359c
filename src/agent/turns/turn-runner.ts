import { setTimeout as sleep } from 'node:timers/promises';
import { metrics, word } from '../../metrics/registry.js';
import { requestDrain } from '../core/drain.js';
import type { Logger } from '../../logger.js';
import { waitingCards } from '../../review/cards/doors.js';
import { shippingHere } from '../../channels/registry.js';
import type { Deps } from '../../deps.js';
import { publishDone, publishFinished, turnBus } from '../core/agent.bus.js';
import { FAILURES, type Bubble, type MessageView, type Turn } from '../core/agent.types.js';
import { BrainError, type Brain, type BrainContext, type BrainStep, type ToolCall, type ToolResult } from '../core/brain.js';
import { createLlmBrain } from '../brains/llm/llm-brain.js';
import { modelBudget } from '../brains/llm/model-budget.js';
import { offlineBrain } from '../brains/offline/offline-brain.js';
import type { Runner } from '../../db.js';
import { conversationRepository } from '../core/conversation.repository.js';
import { RUNNER, turnStatements } from '../core/turn-statements.js';
import { holdAccount } from './turn-lock.js';
import { turnsRepository } from '../core/turns.repository.js';
import { turnSteps } from './turn-steps.repository.js';
import { runStep } from './step-runner.js';
import type { AgentDoors, ToolRegistry } from '../tools/tool.js';

/** Turns one job runs before handing the account to a fresh job, so one busy account cannot hog a worker. */
const TURNS_PER_JOB = 20;
const MAX_ROUNDS = 6;
/** Claims of one turn (its first run and resumes after dead workers) before it is failed. */
export const MAX_TURN_ATTEMPTS = 3;

/** The configured brain; the LLM brain is shown the tools of `tools`. */
export function brainFor(deps: Pick<Deps, 'config' | 'db' | 'logger' | 'queues'>, tools: ToolRegistry): Brain {
  return deps.config.agent.brain === 'llm' ? createLlmBrain(deps.config.agent.llm, tools, fetch, modelBudget(deps)) : offlineBrain;
}

class Interrupted extends Error {}
class NotResumable extends Error {}

async function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) throw new Interrupted();
  if (ms > 0) await sleep(ms, undefined, { signal }).catch(() => undefined);
  if (signal.aborted) throw new Interrupted();
}

function once<T>(load: () => Promise<T>): () => Promise<T> {
  let cached: Promise<T> | null = null;
  return () => (cached ??= load());
}

function contextFor(deps: Deps, turn: Turn, memory: string[]): BrainContext {
  const conversation = conversationRepository(deps.db);
  return {
    accountId: turn.accountId,
    turnId: turn.id,
    input: { kind: turn.kind, text: turn.text, data: turn.data },
    memory,
    history: once(() => conversation.recentHistory(turn.accountId, turn.id, 5)),
    reviewQueue: once(() => waitingCards(deps.db, turn.accountId, 10)),
    shipping: once(() => shippingHere(deps.db, turn.accountId)),
  };
}

/** The spec 2.3 view of a turn that just finished (what its waiters answer with). */
function finishedView(turn: Turn, replies: Bubble[]): MessageView {
  return {
    requestId: turn.id,
    status: turn.status,
    text: turn.text,
    sentAt: turn.createdAt,
    replies,
    ...(turn.status === 'failed' ? { failure: turn.failure ?? 'failed' } : {}),
    interrupted: turn.interrupted,
  };
}

/**
 * Finishes a turn (synchronous commit) and sends its notice with the finished message, so waiting
 * requests answer without reading it back. Returns whether the account has another runnable turn
 * (null: unknown, the turn was finished elsewhere).
 */
async function finishTurn(
  deps: Deps,
  conn: Runner,
  turn: Turn,
  to: { status: 'replied' | 'failed'; failure?: string; interrupted?: boolean },
): Promise<boolean | null> {
  const finished = await turnStatements.finish(conn, turn.accountId, turn.id, to, Date.now());
  if (!finished) return null;
  if (finished.turn.kind === 'message' && finished.turn.origin === 'api') {
    await publishFinished(deps.redis, deps.config, finishedView(finished.turn, finished.replies));
  } else {
    await publishDone(deps.redis, deps.config, [turn.id]);
  }
  return finished.more;
}

/**
 * Runs one claimed turn to a terminal status. The brain proposes tool calls; this executes them one
 * step at a time, checking the cancellation signal (a later message) before each step. The signal is
 * the Redis cancel notice; while this process's subscriber may have missed one (it was not subscribed
 * without a break since before the claim), the interrupt flag is read from Postgres before each step.
 * A turn claimed again after its worker died (attempts > 1) replays its recorded rounds instead of
 * asking the brain for them and runs only the calls not recorded yet.
 */
async function runTurn(
  deps: Deps,
  conn: Runner,
  claimed: { turn: Turn; memory: string[]; busMark: number },
  tools: { brain: Brain; doors: AgentDoors },
  log: Logger,
) {
  const { brain, doors } = tools;
  const { turn } = claimed;
  const bus = turnBus(deps.config, deps.redis);
  const abort = new AbortController();
  const off = bus.onCancel(turn.id, () => abort.abort());
  const delay = deps.config.agent.stepDelayMs;
  // A cancel that came between the claim and the listener above is remembered by the bus.
  const checkFlag = async () => {
    if (abort.signal.aborted) return;
    if (bus.cancelled(turn.id)) abort.abort();
    else if (!bus.heardSince(claimed.busMark) && (await turnStatements.interruptRequested(conn, turn.accountId, turn.id))) abort.abort();
  };
  let outcome: { status: 'replied' | 'failed'; failure?: string; interrupted?: boolean } = { status: 'replied' };
  try {
    await checkFlag();
    const ctx = contextFor(deps, turn, claimed.memory);
    // Only a turn claimed before has anything recorded: the first run costs no read.
    const recorded = turn.attempts > 1 ? await turnSteps.rounds(conn, turn.accountId, turn.id) : [];
    if (recorded.length)
      log.info({ turnId: turn.id, rounds: recorded.length, attempt: turn.attempts }, 'turn resumed from its recorded steps');
    // Steps counted but not recorded were done before steps were recorded (a turn orphaned across the
    // upgrade): running it again could repeat them.
    if (turn.stepsDone > recorded.reduce((n, r) => n + r.results.length, 0)) throw new NotResumable();
    const transcript: { calls: ToolCall[]; results: ToolResult[] }[] = [];
    let steps = 0;
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const saved = recorded[round];
      let step: BrainStep;
      if (saved) step = { calls: saved.calls, done: saved.done };
      else {
        await pause(delay, abort.signal);
        step = await brain.step(ctx, transcript, abort.signal);
      }
      const results: ToolResult[] = saved ? [...saved.results] : [];
      for (let idx = 0; idx < step.calls.length; idx++) {
        if (++steps > deps.config.agent.maxSteps) break;
        if (idx < results.length) continue;
        await checkFlag();
        await pause(delay, abort.signal);
        const proposed = idx === 0 ? { calls: step.calls, done: step.done } : null;
        results.push(await runStep(deps, conn, turn, { round, idx, proposed }, step.calls[idx]!, doors));
      }
      transcript.push({ calls: step.calls, results });
      if (step.done || !step.calls.length || steps > deps.config.agent.maxSteps) break;
    }
  } catch (err) {
    if (err instanceof Interrupted || abort.signal.aborted)
      outcome = { status: 'failed', failure: FAILURES.interrupted, interrupted: true };
    else if (err instanceof BrainError) outcome = { status: 'failed', failure: err.message };
    else if (err instanceof NotResumable) outcome = { status: 'failed', failure: FAILURES.notResumable };
    else {
      off();
      throw err;
    }
  }
  off();
  const more = await finishTurn(deps, conn, turn, outcome);
  const counted = outcome.interrupted ? 'interrupted' : outcome.status;
  metrics.agentTurns.inc({ outcome: counted, brain: word(brain.name) });
  log.info({ turnId: turn.id, status: outcome.status, interrupted: outcome.interrupted ?? false }, 'turn finished');
  return more;
}

/**
 * A turn left `running` with nobody holding the lock belongs to a worker that died (kill -9, OOM).
 * Every step it recorded committed with its effect, so it is queued again and resumes after its last
 * recorded step, up to MAX_TURN_ATTEMPTS claims; then it fails, saying what is kept. One a later
 * message asked to interrupt ends as interrupted, as it would have had its worker lived. Call only
 * while holding the account's lock.
 */
async function recoverOrphans(deps: Deps, accountId: string, log: Logger): Promise<void> {
  const repo = turnsRepository(deps.db);
  for (const turn of await repo.listRunning(accountId)) {
    if (turn.interruptRequestedAt !== null) {
      await finishTurn(deps, deps.db, turn, { status: 'failed', failure: FAILURES.interrupted, interrupted: true });
      log.warn({ turnId: turn.id }, 'turn orphaned after a later message interrupted it; ended as interrupted');
    } else if (turn.attempts < MAX_TURN_ATTEMPTS && (await repo.requeue(accountId, turn.id))) {
      log.warn({ turnId: turn.id, attempts: turn.attempts, stepsDone: turn.stepsDone }, 'turn orphaned; queued again to resume');
    } else {
      await finishTurn(deps, deps.db, turn, { status: 'failed', failure: FAILURES.workerLost });
      log.warn({ turnId: turn.id, attempts: turn.attempts }, 'turn orphaned too many times; failed');
    }
  }
}

/**
 * Runs the account's queued turns in order (oldest first), one at a time. If another worker holds the
 * account, returns at once: the holder looks for new turns after it lets go, so none is stranded. `doors` are the
 * tool registry and the tools' ways into areas above the agent (tools/tool.ts `AgentDoors`).
 */
export async function drainAccount(
  deps: Deps,
  accountId: string,
  log: Logger,
  doors: AgentDoors,
  brain: Brain = brainFor(deps, doors.tools),
): Promise<number> {
  const bus = turnBus(deps.config, deps.redis);
  let ran = 0;
  let runnable = false;
  for (let pass = 0; pass < 3; pass++) {
    // The first claim goes with taking the lock (one round trip, directly on Postgres); later ones on their own.
    let busMark = bus.mark();
    const got = await holdAccount(deps.db, accountId, true, async (conn, first) => {
      let recovered = false;
      let next: typeof first | null = first;
      while (ran < TURNS_PER_JOB) {
        const claimed = next ?? (await turnStatements.claim(conn, accountId, Date.now(), RUNNER));
        next = null;
        if (claimed.orphans > 0) {
          // Turns left running while we hold the lock were a dead worker's: settle them, then claim again.
          if (recovered) throw new Error(`account ${accountId} still has running turns after their recovery`);
          await recoverOrphans(deps, accountId, log);
          recovered = true;
          busMark = bus.mark();
          continue;
        }
        const turn = claimed.turn;
        if (!turn) break;
        let more: boolean | null;
        if (turn.mode === 'queue' && turn.expiresAt !== null && turn.expiresAt <= Date.now()) {
          more = await finishTurn(deps, conn, turn, { status: 'failed', failure: FAILURES.expired });
        } else {
          more = await runTurn(deps, conn, { turn, memory: claimed.memory, busMark }, { brain, doors }, log);
          ran++;
        }
        if (more === false) break;
        busMark = bus.mark();
      }
    });
    if (!got) return ran;
    // Looked at after letting go: a turn recorded while we held the lock found it busy and left it to us.
    runnable = got.runnable;
    if (ran >= TURNS_PER_JOB || !runnable) break;
  }
  if (runnable) await requestDrain(deps, accountId, { why: 'more', at: Date.now() });
  return ran;
}
