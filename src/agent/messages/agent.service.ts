import type { Config } from '../../config.js';
import type { Db, Queryable, Trx } from '../../db.js';
import type { Deps } from '../../deps.js';
import { newId } from '../../ids.js';
import { publishCancel } from '../core/agent.bus.js';
import { agentStateRepository, type WorkWaiting } from '../core/agent-state.repository.js';
import { RUNNING_WINDOW_MS, type MessageView, type OutsideData, type Turn, type TurnKind, type TurnMode } from '../core/agent.types.js';
import { conversationRepository } from '../core/conversation.repository.js';
import { messageView } from './message-view.js';
import { modelCallsStatus } from '../brains/llm/model-budget.js';
import { queueTurn } from '../core/drain.js';
import { gateReplyWake, lockReplyGates, recordReplyWake, replyKeysOf } from '../replies/reply-wakes.js';
import { turnStatements, type RecordAudit } from '../core/turn-statements.js';
import { turnsRepository } from '../core/turns.repository.js';
import type { Principal } from '../../tokens/tokens.types.js';

export { isTerminal, messageView } from './message-view.js';

/** What a producer (API process, webhook intake, scheduler) needs to start turns. */
export type AgentDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues'>;

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
  /** A reply's wake the reply gate held: folded into its thread's waiting wake (`turn`), or deferred past an hourly limit. */
  gate?: 'folded' | 'deferred';
}

/** Logs what the reply gate held, one line per account and kind of hold. */
function logGated(deps: AgentDeps, recorded: Recorded[]): void {
  const held = new Map<string, { accountId: string; gate: string; turnIds: string[] }>();
  for (const r of recorded) {
    if (!r.gate) continue;
    const key = `${r.turn.accountId} ${r.gate}`;
    const entry = held.get(key) ?? { accountId: r.turn.accountId, gate: r.gate, turnIds: [] };
    entry.turnIds.push(r.turn.id);
    held.set(key, entry);
  }
  for (const h of held.values()) {
    if (h.gate === 'folded')
      deps.logger.info({ accountId: h.accountId, turnIds: h.turnIds }, 'replies folded into the waiting wake of their thread');
    else deps.logger.warn({ accountId: h.accountId, turnIds: h.turnIds }, 'reply wakes over the hourly limit; deferred');
  }
}

/**
 * Records a turn input: one statement that inserts it, flags the account's running turns when it is a
 * new `interrupt` message, and touches the account's activity (and, with `opts.audit`, writes the audit
 * row). Run it in the caller's transaction or on its own (it is atomic either way); call `dispatchTurn`
 * after commit.
 */
export async function recordTurn(trx: Queryable, config: Config, input: TurnInput, opts: { audit?: RecordAudit } = {}): Promise<Recorded> {
  // A reply's wake, by whichever door it comes, passes the reply gate.
  if (replyKeysOf(input) && !input.clientRequestId && !opts.audit) {
    const one = (t: Trx) => recordTurns(t, config, [input]).then((r) => r[0]!);
    return trx.isTransaction ? one(trx as Trx) : trx.transaction(one);
  }
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
  await queueTurn(deps, recorded.turn);
}

/**
 * `recordTurn` for many inputs at once, inside the caller's transaction: one insert for the turns, one
 * upsert for the accounts' state. Only for inputs that interrupt nothing and carry no clientRequestId
 * (events, replies' wakes). A reply's wake passes the reply gate (reply-wakes.ts): folded into its
 * thread's waiting wake it comes back as that turn with `created: false` and `gate: 'folded'`; past an
 * hourly limit it is recorded due later (`gate: 'deferred'`). Call `dispatchTurns` after commit.
 */
export async function recordTurns(trx: Trx, config: Config, inputs: TurnInput[]): Promise<Recorded[]> {
  const at = Date.now();
  for (const input of inputs) {
    if (input.kind === 'message' || input.clientRequestId)
      throw new Error('recordTurns takes inputs without a clientRequestId that interrupt nothing');
  }
  const keys = inputs.map((input) => replyKeysOf(input));
  const out: Recorded[] = new Array(inputs.length);
  const replies = keys.flatMap((k, i) => (k ? [i] : []));
  if (replies.length) {
    await lockReplyGates(
      trx,
      replies.map((i) => inputs[i]!.accountId),
    );
    // One at a time: a reply later in the batch folds into a wake made earlier in it.
    for (const i of replies) {
      const input = inputs[i]!;
      const gate = await gateReplyWake(trx, config, input.accountId, keys[i]!, at);
      if (gate.fold) {
        out[i] = { turn: gate.fold, created: false, interrupting: [], gate: 'folded' };
        continue;
      }
      const [turn] = await turnsRepository(trx).insertMany([newTurn(config, { ...input, notBefore: gate.notBefore }, at)]);
      await recordReplyWake(trx, turn!, keys[i]!, at);
      out[i] = { turn: turn!, created: true, interrupting: [], ...(gate.notBefore > at ? { gate: 'deferred' as const } : {}) };
    }
  }
  const plain = keys.flatMap((k, i) => (k ? [] : [i]));
  const turns = await turnsRepository(trx).insertMany(plain.map((i) => newTurn(config, inputs[i]!, at)));
  plain.forEach((i, n) => {
    out[i] = { turn: turns[n]!, created: true, interrupting: [] };
  });
  await agentStateRepository(trx).touchStates(
    inputs.map((i) => i.accountId),
    at,
  );
  return out;
}

function newTurn(config: Config, input: TurnInput, at: number) {
  return {
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
  };
}

/**
 * `dispatchTurn` for turns recorded together: one drain job per account for those due now (the drain
 * runs every due turn of the account, oldest first), named after the account's last of the batch; a
 * turn due later (a reply's wake past an hourly limit) gets its own job, delayed to its time.
 */
export async function dispatchTurns(deps: AgentDeps, recorded: Recorded[]): Promise<void> {
  logGated(deps, recorded);
  const now = Date.now();
  const last = new Map<string, Turn>();
  const later: Turn[] = [];
  for (const r of recorded) {
    if (!r.created) continue;
    if (r.turn.notBefore > now) later.push(r.turn);
    else last.set(r.turn.accountId, r.turn);
  }
  await Promise.all([...last.values(), ...later].map((turn) => queueTurn(deps, turn)));
}

/** A message this token sent through the API, or null (unknown, another token's or account's, not an API message). */
export async function findApiMessage(db: Db, accountId: string, tokenId: string, requestId: string): Promise<Turn | null> {
  const turn = await turnsRepository(db).find(accountId, requestId);
  if (turn?.kind !== 'message' || turn.origin !== 'api' || turn.tokenId !== tokenId) return null;
  return turn;
}

export async function getMessage(db: Db, accountId: string, tokenId: string, requestId: string): Promise<MessageView | null> {
  const turn = await findApiMessage(db, accountId, tokenId, requestId);
  return turn ? messageView(db, turn) : null;
}

export function getThread(db: Db, accountId: string, tokenId: string, limit: number) {
  return conversationRepository(db).thread(accountId, tokenId, limit);
}

/**
 * Spec 2.5. `running` is derived (a turn started within 30 minutes and unfinished); `sandbox` follows it.
 * `modelCalls` (not in the spec's list): today's model-call budget, how much of it is used, and when it ran out.
 * `waitingElsewhere`: the work areas above the agent hold for it (the route hands the webhooks' accepted events).
 */
export async function getStatus(db: Db, accountId: string, modelCallsPerDay: number, waitingElsewhere: WorkWaiting) {
  const s = await agentStateRepository(db).status(accountId, Date.now(), RUNNING_WINDOW_MS, waitingElsewhere);
  return { sandbox: s.running ? 'alive' : 'dead', ...s, modelCalls: await modelCallsStatus(db, accountId, modelCallsPerDay) };
}

/**
 * Whose conversation a caller's turns belong to: a token's own (its id), or for a dashboard session the
 * person's, kept across their sessions (their id, `per_…`, which no token's id can equal). So a person's chat
 * outlives a sign-in, a colleague's dashboard turn is a 404 to everyone else, and no token's thread lists it.
 */
export const conversationOf = (p: Pick<Principal, 'via' | 'personId' | 'tokenId'>): string =>
  p.via === 'session' && p.personId ? p.personId : p.tokenId;
