import type { Db, Trx } from '../../db.js';
import { FAILURES, RUNNING_WINDOW_MS, type Bubble, type MessageView, type Turn } from '../core/agent.types.js';
import { turnsRepository } from '../core/turns.repository.js';

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
