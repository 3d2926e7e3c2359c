import type { Config } from '../config.js';
import type { Db, Queryable, Trx } from '../db.js';
import { newId } from '../ids.js';
import type { QueueSet } from '../jobs/registry.js';
import type { Logger } from '../logger.js';
import type { Redis } from '../redis.js';
import { publishCancel, turnBus } from './agent.bus.js';
import { FAILURES, RUNNING_WINDOW_MS, type Bubble, type MessageView, type OutsideData, type Turn, type TurnKind, type TurnMode } from './agent.types.js';
import { requestDrain } from './turn-runner.js';
import { turnsRepository, turnStatements, type RecordAudit } from './turns.repository.js';

/** What a producer (API process, webhook intake, scheduler) needs to start turns. */
export interface AgentDeps {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  queues: QueueSet;
}

/** Every way a turn starts goes through this one shape; later issues add a `kind`, not an entry point. */
export interface TurnInput {
  accountId: string;
  kind: TurnKind;
  /** `api` for token messages; anything else (`hook`, `schedule`, `dashboard`) is not readable through the API. */
  origin: string;
  tokenId?: string | null;
  clientRequestId?: string | null;
  text?: string;
  data?: OutsideData | null;
  /** `interrupt` stops the account's running turn; `queue` waits behind it (and expires). */
  mode?: TurnMode;
  /** Epoch ms before which the turn does not start (scheduled wakes). */
  notBefore?: number;
}

export interface Recorded {
  turn: Turn;
  /** False when the clientRequestId was already used: `turn` is the original. */
  created: boolean;
  /** Running turns asked to stop; signalled after commit. */
  interrupting: string[];
}

/**
 * Records a turn input: one statement that inserts it, flags the account's running turns when it is a
 * new `interrupt` message, and touches the account's activity (and, with `opts.audit`, writes the audit
 * row). Run it in the caller's transaction or on its own (it is atomic either way); call `dispatchTurn`
 * after commit.
 */
export async function recordTurn(trx: Queryable, config: Config, input: TurnInput, opts: { audit?: RecordAudit } = {}): Promise<Recorded> {
  const at = Date.now();
  const mode = input.mode ?? 'interrupt';
  const recorded = await turnStatements.record(
    trx,
    {
      id: newId(input.kind === 'message' ? 'req' : 'turn'),
      accountId: input.accountId,
      kind: input.kind,
      origin: input.origin,
      tokenId: input.tokenId ?? null,
      clientRequestId: input.clientRequestId ?? null,
      text: input.text ?? '',
      data: input.data ?? null,
      mode,
      createdAt: at,
      notBefore: Math.max(at, input.notBefore ?? at),
      expiresAt: mode === 'queue' ? at + config.agent.queuedMessageTtlMs : null,
    },
    { interrupt: mode === 'interrupt' && input.kind === 'message', audit: opts.audit },
  );
  if (!recorded) {
    const original = await turnsRepository(trx).findByClientRequestId(input.tokenId ?? '', input.clientRequestId ?? '');
    if (!original) throw new Error('clientRequestId conflict without a row');
    return { turn: original, created: false, interrupting: [] };
  }
  return { turn: recorded.turn, created: true, interrupting: recorded.interrupting };
}

/**
 * After commit: signals the workers holding interrupted turns and queues the account's drain job.
 * A failed enqueue is only logged: the row is the truth and the maintenance sweeper queues it later.
 */
export async function dispatchTurn(deps: AgentDeps, recorded: Recorded): Promise<void> {
  if (!recorded.created) return;
  await publishCancel(deps.redis, deps.config, recorded.interrupting);
  const { turn } = recorded;
  try {
    await requestDrain(deps, turn.accountId, `turn-${turn.id}`, turn.notBefore > Date.now() ? turn.notBefore - Date.now() : undefined);
  } catch (err) {
    deps.logger.warn({ turnId: turn.id, err: (err as Error).message }, 'turn recorded but not queued; the sweeper will queue it');
  }
}

/**
 * `recordTurn` for many inputs at once, inside the caller's transaction: one insert for the turns, one
 * upsert for the accounts' state. Only for inputs that interrupt nothing and carry no clientRequestId
 * (events); each is recorded (created: true). Call `dispatchTurns` after commit.
 */
export async function recordTurns(trx: Trx, config: Config, inputs: TurnInput[]): Promise<Recorded[]> {
  const at = Date.now();
  for (const input of inputs) {
    if (input.kind === 'message' || input.clientRequestId) throw new Error('recordTurns takes inputs without a clientRequestId that interrupt nothing');
  }
  const repo = turnsRepository(trx);
  const turns = await repo.insertMany(
    inputs.map((input) => ({
      id: newId('turn'),
      accountId: input.accountId,
      kind: input.kind,
      origin: input.origin,
      tokenId: input.tokenId ?? null,
      clientRequestId: null,
      text: input.text ?? '',
      data: input.data ?? null,
      mode: input.mode ?? 'interrupt',
      createdAt: at,
      notBefore: Math.max(at, input.notBefore ?? at),
      expiresAt: input.mode === 'queue' ? at + config.agent.queuedMessageTtlMs : null,
    })),
  );
  await repo.touchStates(inputs.map((i) => i.accountId), at);
  return turns.map((turn) => ({ turn, created: true, interrupting: [] }));
}

/**
 * `dispatchTurn` for turns recorded together: one drain job per account (the drain runs every queued
 * turn of the account, oldest first), named after the account's last turn of the batch.
 */
export async function dispatchTurns(deps: AgentDeps, recorded: Recorded[]): Promise<void> {
  const last = new Map<string, Turn>();
  for (const r of recorded) if (r.created) last.set(r.turn.accountId, r.turn);
  await Promise.all(
    [...last.values()].map(async (turn) => {
      try {
        await requestDrain(deps, turn.accountId, `turn-${turn.id}`, turn.notBefore > Date.now() ? turn.notBefore - Date.now() : undefined);
      } catch (err) {
        deps.logger.warn({ turnId: turn.id, err: (err as Error).message }, 'turn recorded but not queued; the sweeper will queue it');
      }
    }),
  );
}

/** The one entry point for every turn input (message, event, workflow run, revision, scheduled wake). */
export async function startTurn(deps: AgentDeps, input: TurnInput): Promise<Recorded> {
  const recorded = await deps.db.transaction((trx) => recordTurn(trx, deps.config, input));
  await dispatchTurn(deps, recorded);
  return recorded;
}

export const isTerminal = (s: string) => s === 'replied' || s === 'failed';

/** Spec 2.3 view of a turn; a turn `running` past the 30-minute window reads as failed. */
export async function messageView(db: Db | Trx, turn: Turn, now = Date.now(), known?: Bubble[]): Promise<MessageView> {
  const replies = known ?? (await turnsRepository(db).latestReplies(turn.id, 5));
  const stale = turn.status === 'running' && turn.startedAt !== null && turn.startedAt < now - RUNNING_WINDOW_MS;
  const status = stale ? 'failed' : turn.status;
  const failure = stale ? FAILURES.stale : turn.failure;
  return {
    requestId: turn.id,
    status,
    text: turn.text,
    sentAt: turn.createdAt,
    replies,
    ...(status === 'failed' ? { failure: failure ?? 'failed' } : {}),
    interrupted: turn.interrupted,
  };
}

/** A message this token sent through the API, or null (unknown, another token's or account's, not an API message). */
export async function findApiMessage(db: Db, accountId: string, tokenId: string, requestId: string): Promise<Turn | null> {
  const turn = await turnsRepository(db).find(accountId, requestId);
  if (!turn || turn.kind !== 'message' || turn.origin !== 'api' || turn.tokenId !== tokenId) return null;
  return turn;
}

export async function getMessage(db: Db, accountId: string, tokenId: string, requestId: string): Promise<MessageView | null> {
  const turn = await findApiMessage(db, accountId, tokenId, requestId);
  return turn ? messageView(db, turn) : null;
}

export function getThread(db: Db, accountId: string, tokenId: string, limit: number) {
  return turnsRepository(db).thread(accountId, tokenId, limit);
}

/** Spec 2.5. `running` is derived (a turn started within 30 minutes and unfinished); `sandbox` follows it. */
export async function getStatus(db: Db, accountId: string) {
  const s = await turnsRepository(db).status(accountId, Date.now(), RUNNING_WINDOW_MS);
  return { sandbox: s.running ? 'alive' : 'dead', ...s };
}

export type WaitEnd = { message: MessageView; terminal: true } | { message: MessageView | null; terminal: false; ended?: 'unauthorized' | 'poll_failed' };

/** A subscription to one turn's `done` notice; open it before the turn can finish so no notice is missed. */
export interface TurnWatch {
  /** The notice that arrived since the last `take()`, if any: `view` is the finished message when the notice carried it. */
  take(): { view: MessageView | null } | null;
  /** Resolves on a notice, after `ms`, or when `signal` aborts. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  close(): void;
}

export function watchTurn(deps: AgentDeps, turnId: string): TurnWatch {
  let noticed: { view: MessageView | null } | null = null;
  let wake: () => void = () => {};
  const off = turnBus(deps.config, deps.redis).onDone(turnId, (_id, view) => {
    noticed = { view };
    wake();
  });
  return {
    take() {
      const was = noticed;
      noticed = null;
      return was;
    },
    sleep(ms, signal) {
      if (noticed || signal.aborted) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          wake = () => {};
          resolve();
        }
        wake = done;
        signal.addEventListener('abort', done);
      });
    },
    close: off,
  };
}

/**
 * Holds until the turn is terminal, the time is up, the token is revoked or the client leaves. It holds
 * no database connection between reads: a Redis notice wakes it, or the bounded poll interval does.
 * A worker's notice carries the finished message, so then at most the token is checked (one indexed
 * read, skipped when it was seen live less than AGENT_WAIT_POLL_MS ago); otherwise the turn is read. `fresh`: the turn was just written by this request (so it is
 * queued and the token was live): the first read is skipped.
 */
export async function waitForMessage(
  deps: AgentDeps,
  ids: { accountId: string; tokenId: string; turnId: string },
  seconds: number,
  signal: AbortSignal,
  opts: { watch?: TurnWatch; fresh?: Turn } = {},
): Promise<WaitEnd> {
  const deadline = Date.now() + seconds * 1000;
  const watch = opts.watch ?? watchTurn(deps, ids.turnId);
  let last: MessageView | null = null;
  let skipRead = Boolean(opts.fresh);
  // When the token was last seen live: a fresh request was just authenticated. A revocation is noticed
  // within AGENT_WAIT_POLL_MS, so a finished message arriving sooner than that after a check is answered
  // without another one.
  let liveAt = opts.fresh ? Date.now() : 0;
  try {
    for (;;) {
      if (skipRead && opts.fresh) {
        skipRead = false;
        last = { requestId: opts.fresh.id, status: 'queued', text: opts.fresh.text, sentAt: opts.fresh.createdAt, replies: [], interrupted: false };
      } else {
        const notice = watch.take();
        try {
          if (notice?.view && isTerminal(notice.view.status)) {
            const recent = Date.now() - liveAt < deps.config.agent.waitPollMs;
            if (!recent && !(await turnStatements.tokenLive(deps.db, ids.tokenId))) return { message: null, terminal: false, ended: 'unauthorized' };
            return { message: notice.view, terminal: true };
          }
          const readAt = Date.now();
          const [live, found] = await Promise.all([
            turnStatements.tokenLive(deps.db, ids.tokenId),
            turnsRepository(deps.db).findWithReplies(ids.accountId, ids.turnId, 5),
          ]);
          if (!live) return { message: null, terminal: false, ended: 'unauthorized' };
          liveAt = readAt;
          if (!found) return { message: last, terminal: false, ended: 'poll_failed' };
          last = await messageView(deps.db, found.turn, Date.now(), found.replies);
        } catch {
          return { message: last, terminal: false, ended: 'poll_failed' };
        }
        if (isTerminal(last.status)) return { message: last, terminal: true };
      }
      const left = deadline - Date.now();
      if (left <= 0 || signal.aborted) return { message: last, terminal: false };
      await watch.sleep(Math.min(left, deps.config.agent.waitPollMs), signal);
    }
  } finally {
    watch.close();
  }
}

/**
 * Holds until a turn is terminal and returns its status and failure, or null when `timeoutMs` passes
 * or `signal` aborts first. The turn's done notice wakes it; `pollMs` only bounds the time between
 * reads when a notice is lost. For callers that run turns and wait on them (workflow steps).
 */
export async function waitForTurnEnd(
  deps: AgentDeps,
  turnId: string,
  opts: { timeoutMs: number; pollMs: number },
  signal?: AbortSignal,
): Promise<{ status: 'replied' | 'failed'; failure: string | null } | null> {
  const until = Date.now() + opts.timeoutMs;
  const watch = watchTurn(deps, turnId);
  const stop = signal ?? new AbortController().signal;
  try {
    while (Date.now() < until && !stop.aborted) {
      watch.take();
      const t = await deps.db('agent_turns').where({ id: turnId }).first<{ status: string; failure: string | null } | undefined>('status', 'failure');
      if (t && isTerminal(t.status)) return { status: t.status as 'replied' | 'failed', failure: t.failure };
      await watch.sleep(Math.min(opts.pollMs, Math.max(0, until - Date.now())), stop);
    }
    return null;
  } finally {
    watch.close();
  }
}
