import type { AgentDeps } from '../agent/messages/agent.service.js';
import { REPLY_TOKEN } from '../mail/outbound.js';
import { threadsRepository, type Thread } from '../mail/threads.repository.js';
import { afterApplied, applyOutcome } from './effects.service.js';

/** A token as a URL may carry it: tokens are lowercase, so a case-folded link still finds its thread. */
const tokenOf = (raw: string): string | null => {
  const t = raw.toLowerCase();
  return REPLY_TOKEN.test(t) ? t : null;
};

/** The thread a one-click URL names, or null (unknown, or not a token). Reads only. */
export async function threadForUnsubscribe(deps: Pick<AgentDeps, 'db'>, raw: string): Promise<Thread | null> {
  const token = tokenOf(raw);
  return token ? threadsRepository(deps.db).byToken(token) : null;
}

/**
 * One-click unsubscribe (RFC 8058): the thread's address on the block list for good, its lead
 * `unsubscribed`, its sequences stopped, through `applyOutcome` like an unsubscribe by mail. The thread
 * row is locked for the transaction, so concurrent POSTs of one link apply one after another; the
 * outcome is idempotent (counted once per send), so a repeat changes nothing. Null: no such thread.
 */
export async function unsubscribeByToken(deps: AgentDeps, raw: string, at = Date.now()): Promise<Thread | null> {
  const token = tokenOf(raw);
  if (!token) return null;
  const done = await deps.db.transaction(async (trx) => {
    const thread = await threadsRepository(trx).lockByToken(token);
    if (!thread) return null;
    const applied = await applyOutcome(trx, deps.config, thread, { kind: 'unsubscribe' }, { id: `one-click-${thread.sendId}`, at });
    return { thread, applied };
  });
  if (!done) return null;
  await afterApplied(deps, done.applied);
  return done.thread;
}
