import { settleAuditStatus, type Actor } from '../../audit/audit.service.js';
import type { Queryable } from '../../db.js';
import { BadRequest, Rejected, type AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { dispatchTurn, recordTurn, type AgentDeps, type Recorded } from './agent.service.js';
import type { MessageView, Turn } from '../core/agent.types.js';
import { messageRequest, type MessageFields } from './message-request.js';
import { isTerminal, messageView } from './message-view.js';
import { turnsRepository } from '../core/turns.repository.js';
import { waitForMessage, watchTurn } from './turn-wait.js';

/** Serializes one token's message writes (dedupe and the `interrupt: false` check) across API processes. */
const TOKEN_LOCK_NAMESPACE = 7302;

/** Who sends: the token's account and id, and how the write is audited. */
export interface MessageSender {
  accountId: string;
  tokenId: string;
  actor: Actor;
  /** Whether the caller may still be answered (a dashboard session not ended); default: its token is not revoked. */
  live?: () => Promise<boolean>;
}

/** Spec 4.3's answer: 200 when the turn finished within `waitSeconds`, else 202. */
export interface MessageAnswer {
  status: 200 | 202;
  body: {
    requestId: string;
    deduplicated: boolean;
    notSent?: boolean;
    message?: MessageView;
    waitEnded?: 'unauthorized' | 'poll_failed';
  };
}

class NotSentBadRequest extends BadRequest {
  constructor(
    sentence: string,
    private readonly more: Record<string, unknown>,
  ) {
    super(sentence);
  }
  override extra() {
    return this.more;
  }
}

/** A 400 or 409 that also names the earlier unfinished request (spec 4.3, `interrupt: false`). */
function withNotSent(error: AppError, earlier: Record<string, unknown>): AppError {
  if (error instanceof Rejected) return new Rejected(error.message, { ...earlier, reason: error.message });
  return new NotSentBadRequest(error.error, earlier);
}

/**
 * A bad body with `interrupt: false` while an earlier message of the token is unfinished: the 400 or
 * 409 also names that message (`notSent`, spec 4.3). The body failed validation, so only `interrupt`
 * is looked at, and only for being exactly `false`.
 */
export async function refuseMessage(
  deps: Pick<AgentDeps, 'db'>,
  sender: Omit<MessageSender, 'actor'>,
  error: AppError,
  body: unknown,
): Promise<AppError> {
  const holdIfBusy = typeof body === 'object' && body !== null && (body as Record<string, unknown>).interrupt === false;
  if (!holdIfBusy) return error;
  const newest = await turnsRepository(deps.db).newestOfToken(sender.accountId, sender.tokenId);
  if (!newest || isTerminal(newest.status)) return error;
  return withNotSent(error, { notSent: true, requestId: newest.id, message: await messageView(deps.db, newest) });
}

type Outcome = { kind: 'new'; recorded: Recorded } | { kind: 'dedup' | 'notSent'; turn: Turn };

/**
 * POST /agent/messages, every rule of spec 4.3 past the body's own (the API validated it): records the
 * message (or answers the original of a `clientRequestId` retry, or `notSent` while the token's newest
 * message is unfinished with `interrupt: false`), queues its turn and, with `waitSeconds`, waits for it.
 * A new message is audited as 202 with its record; a wait that ends with the reply sets the row to 200.
 */
export async function sendMessage(
  deps: AgentDeps,
  sender: MessageSender,
  fields: MessageFields,
  opts: { signal: AbortSignal; log: Logger },
): Promise<MessageAnswer> {
  const req = messageRequest(fields);
  const turnInput = {
    accountId: sender.accountId,
    kind: 'message' as const,
    origin: 'api',
    tokenId: sender.tokenId,
    clientRequestId: req.clientRequestId,
    text: req.text,
    mode: req.mode,
  };
  const { actor } = sender;
  const audit = {
    actor: actor.actor,
    tokenId: actor.tokenId,
    tokenLabel: actor.tokenLabel,
    method: actor.method,
    route: actor.route,
    status: 202,
  };
  const record = async (q: Queryable): Promise<Outcome> => {
    const recorded = await recordTurn(q, deps.config, turnInput, { audit });
    return recorded.created ? { kind: 'new', recorded } : { kind: 'dedup', turn: recorded.turn };
  };
  // A plain message is one statement (turn, interrupt flags, activity and audit row together).
  // Only the dedupe lookup and the `interrupt: false` check need the token serialized, in a transaction.
  const outcome =
    !req.clientRequestId && !req.holdIfBusy
      ? await record(deps.db)
      : await deps.db.transaction(async (trx): Promise<Outcome> => {
          await trx.raw('SELECT pg_advisory_xact_lock(?, hashtext(?))', [TOKEN_LOCK_NAMESPACE, sender.tokenId]);
          const repo = turnsRepository(trx);
          if (req.clientRequestId) {
            const existing = await repo.findByClientRequestId(sender.tokenId, req.clientRequestId);
            if (existing) {
              if (existing.text !== req.text) {
                throw new Rejected(
                  `clientRequestId ${req.clientRequestId} was already used with a different text; use a new clientRequestId`,
                );
              }
              return { kind: 'dedup', turn: existing };
            }
          }
          if (req.holdIfBusy) {
            const newest = await repo.newestOfToken(sender.accountId, sender.tokenId);
            if (newest && !isTerminal(newest.status)) return { kind: 'notSent', turn: newest };
          }
          return record(trx);
        });

  if (outcome.kind === 'notSent') {
    return {
      status: 202,
      body: { requestId: outcome.turn.id, deduplicated: false, notSent: true, message: await messageView(deps.db, outcome.turn) },
    };
  }
  const turn = outcome.kind === 'new' ? outcome.recorded.turn : outcome.turn;
  const base = { requestId: turn.id, deduplicated: outcome.kind === 'dedup' };
  // Subscribe before the turn is queued, so a fast turn's notice cannot slip past the wait.
  const watch = req.waitSeconds === null ? undefined : watchTurn(deps, turn.id);
  if (outcome.kind === 'new') await dispatchTurn(deps, outcome.recorded);
  if (req.waitSeconds === null || !watch) return { status: 202, body: base };

  const end = await waitForMessage(
    deps,
    { accountId: sender.accountId, tokenId: sender.tokenId, turnId: turn.id, live: sender.live },
    req.waitSeconds,
    opts.signal,
    { watch, fresh: outcome.kind === 'new' ? turn : undefined },
  );
  if (end.terminal) {
    if (outcome.kind === 'new') await answeredNow(deps, actor, turn.id, opts.log);
    return { status: 200, body: { ...base, message: end.message } };
  }
  if (end.ended === 'unauthorized') return { status: 202, body: { ...base, waitEnded: 'unauthorized' } };
  return {
    status: 202,
    body: {
      ...base,
      ...(end.message ? { message: end.message } : {}),
      ...(end.ended ? { waitEnded: end.ended } : {}),
    },
  };
}

/**
 * The message's audit row was written with it, as 202; a request that waited answers 200, and the row
 * says so. The answer stands if this write fails (the reply is done): the row then keeps 202.
 */
async function answeredNow(deps: Pick<AgentDeps, 'db'>, actor: Actor, turnId: string, log: Logger): Promise<void> {
  try {
    await settleAuditStatus(deps.db, actor, turnId, 200);
  } catch (err) {
    log.warn({ turnId, err: (err as Error).message }, 'audit status of a waited message not updated to 200');
  }
}
