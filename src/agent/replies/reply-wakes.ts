import type { Config } from '../../config.js';
import type { Queryable, Trx } from '../../db.js';
import { newId } from '../../ids.js';
import {
  detailWithLaterReplies,
  noteLaterReplies,
  turnsWithWaitingCards,
  withLaterReplies,
  type LaterReplies,
} from '../../review/cards/later-replies.js';
import type { OutsideData, Turn } from '../core/agent.types.js';
import { turnsRepository } from '../core/turns.repository.js';

/**
 * The gate a reply's wake passes (docs/decisions/agent-wakes.md). A mail or network reply wakes the
 * agent once per thread while that wake, or the card it made, waits: a later reply on the thread folds
 * into it (counted, and noted on the waiting card). Reply wakes per lead and per account in any rolling
 * hour are limited; one past a limit is recorded all the same, due when the hour allows it.
 */

const HOUR = 3_600_000;

/** The thread and lead a reply's wake belongs to, and who replied. */
export interface ReplyKeys {
  thread: string;
  lead: string;
  from: string;
}

/** What the gate did with a reply's wake: folded it into a waiting one, or let it through (due at `notBefore`). */
export type ReplyGate = { fold: Turn; replies: number } | { fold: null; notBefore: number };

const str = (o: Record<string, unknown>, k: string) => (typeof o[k] === 'string' ? (o[k] as string).trim() : '');

/** The keys of a reply's wake (a `wake` carrying a mail or network reply), or null for any other input. */
export function replyKeysOf(input: { kind: string; data?: OutsideData | null }): ReplyKeys | null {
  const content = input.data?.content;
  if (input.kind !== 'wake' || !content || typeof content !== 'object' || Array.isArray(content)) return null;
  const c = content as Record<string, unknown>;
  const from = str(c, 'from');
  if (!from) return null;
  const lead = str(c, 'leadId') ? `lead:${str(c, 'leadId')}` : `from:${from.toLowerCase()}`;
  if (input.data!.label === 'mail reply') {
    const answered = str(c, 'messageId') || str(c, 'sendId');
    return answered ? { thread: `mail:${answered}`, lead, from } : null;
  }
  if (input.data!.label === 'network reply') return { thread: `network:${from.toLowerCase()}`, lead, from };
  return null;
}

/** Serialises the gate per account for the rest of the caller's transaction (in account order: no deadlock). */
export async function lockReplyGates(trx: Trx, accountIds: string[]): Promise<void> {
  for (const id of [...new Set(accountIds)].sort()) {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`agent-reply-wakes:${id}`]);
  }
}

/** The newest wake of this thread that still waits (queued, running, or its card waiting for a person). */
async function waitingWake(trx: Trx, accountId: string, thread: string): Promise<string | null> {
  const rows: { turn_id: string; status: string }[] = await trx('agent_reply_wakes as w')
    .join('agent_turns as t', 't.id', 'w.turn_id')
    .where({ 'w.account_id': accountId, 'w.thread_key': thread })
    .orderBy('w.created_at', 'desc')
    .limit(5)
    .select('w.turn_id', 't.status');
  const live = rows.find((r) => r.status === 'queued' || r.status === 'running');
  if (live) return live.turn_id;
  const finished = rows.map((r) => r.turn_id);
  const withCards = await turnsWithWaitingCards(trx, accountId, finished);
  return finished.find((id) => withCards.has(id)) ?? null;
}

/** Reply wakes read to place a new one; with more due from the last hour on, it goes after the last of them. */
const PLACE_MAX = 1_000;

/** Index of the first of the sorted `xs` above `v`. */
function above(xs: number[], v: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The earliest time from `at` at which one more wake keeps every rolling hour at `limit` or fewer, given
 * the sorted times `dues` (those from the last hour on, the deferred ones too). It is `at` or the moment
 * an hour after one of them, when it leaves the windows; a window ending at `s` is (s - 1h, s].
 */
export function earliestSlot(dues: number[], limit: number, at: number): number {
  const inWindow = (s: number) => above(dues, s) - above(dues, s - HOUR);
  const fits = (t: number) => {
    if (inWindow(t) >= limit) return false;
    for (let i = above(dues, t - 1); i < dues.length && dues[i]! < t + HOUR; i++) if (inWindow(dues[i]!) >= limit) return false;
    return true;
  };
  if (fits(at)) return at;
  for (const d of dues) if (d + HOUR > at && fits(d + HOUR)) return d + HOUR;
  return dues.at(-1)! + HOUR;
}

async function slot(trx: Trx, where: Record<string, string>, limit: number, at: number): Promise<number> {
  const rows: { due_at: number | string }[] = await trx('agent_reply_wakes')
    .where(where)
    .andWhere('due_at', '>', at - HOUR)
    .orderBy('due_at')
    .limit(PLACE_MAX)
    .select('due_at');
  const dues = rows.map((r) => Number(r.due_at));
  if (dues.length < PLACE_MAX) return earliestSlot(dues, limit, at);
  // That many waiting: after the last of them, at the limit's pace.
  const last = await trx('agent_reply_wakes').where(where).max<{ m: number | string }>('due_at as m').first();
  return Number(last!.m) + Math.ceil(HOUR / limit);
}

/** Decides one reply's wake; call under `lockReplyGates`. A fold is recorded here (count and card note). */
export async function gateReplyWake(trx: Trx, config: Config, accountId: string, keys: ReplyKeys, at: number): Promise<ReplyGate> {
  const waiting = await waitingWake(trx, accountId, keys.thread);
  if (waiting) {
    const [row] = await trx('agent_reply_wakes')
      .where({ turn_id: waiting })
      .update({ replies: trx.raw('replies + 1'), last_reply_at: at })
      .returning<{ replies: number; counterpart: string }[]>(['replies', 'counterpart']);
    await noteLaterReplies(trx, accountId, waiting, { count: row!.replies - 1, from: row!.counterpart, lastAt: at }, at);
    const turn = await turnsRepository(trx).find(accountId, waiting);
    return { fold: turn!, replies: row!.replies };
  }
  const limits = config.agent.limits;
  const notBefore = Math.max(
    await slot(trx, { account_id: accountId, lead_key: keys.lead }, limits.replyWakesPerLeadPerHour, at),
    await slot(trx, { account_id: accountId }, limits.replyWakesPerAccountPerHour, at),
  );
  return { fold: null, notBefore };
}

/** Records the wake the gate let through (after its turn is inserted). */
export async function recordReplyWake(trx: Trx, turn: Turn, keys: ReplyKeys, at: number): Promise<void> {
  await trx('agent_reply_wakes').insert({
    turn_id: turn.id,
    account_id: turn.accountId,
    thread_key: keys.thread,
    lead_key: keys.lead,
    counterpart: keys.from,
    replies: 1,
    due_at: turn.notBefore,
    created_at: at,
    last_reply_at: at,
  });
}

/**
 * The replies that came after the one a reply's wake answers, for the card the turn makes now (null when
 * none did, or the turn is no reply's wake). Locks the wake's row until the card's transaction ends, so a
 * reply folding in meanwhile either is counted here or finds the card and notes it there.
 */
export async function laterRepliesOf(q: Queryable, turnId: string): Promise<LaterReplies | null> {
  const row = await q('agent_reply_wakes')
    .where({ turn_id: turnId })
    .forUpdate()
    .first<{ replies: number; counterpart: string; last_reply_at: number | string } | undefined>();
  if (!row || row.replies <= 1) return null;
  return { count: row.replies - 1, from: row.counterpart, lastAt: Number(row.last_reply_at) };
}

/** The prompt (and detail) of a card a turn makes: a reply's wake's card says how many replies came after it. */
export async function laterRepliesNote(
  env: { db: Queryable; turnId: string; fromOutside: boolean },
  prompt: string,
): Promise<{ prompt: string; detail?: Record<string, unknown> }> {
  const later = env.fromOutside ? await laterRepliesOf(env.db, env.turnId) : null;
  return later ? { prompt: withLaterReplies(prompt, later), detail: detailWithLaterReplies(null, later) } : { prompt };
}

/**
 * A copy of a reply's wake (or any event) to run later, due at `notBefore`: what keeps an input the
 * model-call budget turned away. A reply's wake moves its thread to the copy, so later replies fold into it.
 */
export async function postponeTurn(q: Queryable, turn: Turn, notBefore: number, at: number): Promise<Turn> {
  const [copy] = await turnsRepository(q).insertMany([
    {
      id: newId('turn'),
      accountId: turn.accountId,
      kind: turn.kind,
      origin: turn.origin,
      tokenId: null,
      clientRequestId: null,
      text: turn.text,
      data: turn.data,
      mode: turn.mode,
      createdAt: at,
      notBefore,
      expiresAt: null,
    },
  ]);
  await q('agent_reply_wakes').where({ turn_id: turn.id }).update({ turn_id: copy!.id, due_at: notBefore });
  return copy!;
}
