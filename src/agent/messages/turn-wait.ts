import type { AgentDeps } from './agent.service.js';
import type { MessageView, Turn } from '../core/agent.types.js';
import { turnBus } from '../core/agent.bus.js';
import { isTerminal, messageView } from './message-view.js';
import { tokenLive } from '../../tokens/tokens.service.js';
import { turnsRepository } from '../core/turns.repository.js';

export type WaitEnd =
  | { message: MessageView; terminal: true }
  | { message: MessageView | null; terminal: false; ended?: 'unauthorized' | 'poll_failed' };

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
 * read, skipped when it was seen live less than AGENT_WAIT_POLL_MS ago); otherwise the turn is read.
 * `fresh`: the turn was just written by this request (so it is queued and the token was live): the first read is skipped.
 */
export async function waitForMessage(
  deps: AgentDeps,
  ids: { accountId: string; tokenId: string; turnId: string; live?: (() => Promise<boolean>) | undefined },
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
  const callerLive = ids.live ?? (() => tokenLive(deps.db, ids.tokenId));
  try {
    for (;;) {
      if (skipRead && opts.fresh) {
        skipRead = false;
        last = {
          requestId: opts.fresh.id,
          status: 'queued',
          text: opts.fresh.text,
          sentAt: opts.fresh.createdAt,
          replies: [],
          interrupted: false,
        };
      } else {
        const notice = watch.take();
        try {
          if (notice?.view && isTerminal(notice.view.status)) {
            const recent = Date.now() - liveAt < deps.config.agent.waitPollMs;
            if (!recent && !(await callerLive())) return { message: null, terminal: false, ended: 'unauthorized' };
            return { message: notice.view, terminal: true };
          }
          const readAt = Date.now();
          const [live, found] = await Promise.all([callerLive(), turnsRepository(deps.db).findWithReplies(ids.accountId, ids.turnId, 5)]);
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
      const t = await turnsRepository(deps.db).outcome(turnId);
      if (t && isTerminal(t.status)) return { status: t.status as 'replied' | 'failed', failure: t.failure };
      await watch.sleep(Math.min(opts.pollMs, Math.max(0, until - Date.now())), stop);
    }
    return null;
  } finally {
    watch.close();
  }
}
