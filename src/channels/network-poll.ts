import type { Db, Trx } from '../db.js';
import { REPLY_KINDS, type ReplyKind } from '../leads/leads.types.js';
import { countedRefs, recordChannelEvent } from '../results/channel-events.js';
import { textOf } from './channel.types.js';
import { profileUrlOf } from './network.adapter.js';
import type { ProviderEvent } from './provider-http.js';

/** A reply the network provider reported (`reply` event), as the poll hands it to the reply's effects. */
export interface NetworkReply {
  accountId: string;
  /** The provider's event id: a reply is applied once per id. */
  eventId: string;
  /** When it was answered, epoch ms (the event's `at`, never in the future). */
  at: number;
  /** Who answered, as the canonical profile URL; null when the event names none (or not a profile URL). */
  profileUrl: string | null;
  /** What they wrote (`data.text`, outside data), '' when the bridge sent none. */
  text: string;
  /** The kind the bridge judged it (`data.replyKind`), when it gave a known one. */
  bridgeKind: ReplyKind | null;
}

/** What a reply means: its kind and our own decline reason (never the sender's words). */
export interface ReplyJudgement {
  replyKind: ReplyKind;
  declineReason: string | null;
}

/**
 * What a network reply does beyond being counted, given by a layer that may wake the agent and stop
 * sequences (src/inbound/network-replies.service.ts). `judge` runs before the poll's transaction (it may
 * ask the model; it only reads), null meaning an automatic reply, which is neither counted nor applied.
 * `apply` runs in the poll's transaction, once per reply: only when this poll is the one that counted
 * it. `after` runs once the transaction committed, with what each `apply` answered.
 */
export interface NetworkReplyEffects<W> {
  judge(reply: NetworkReply): Promise<ReplyJudgement | null>;
  apply(trx: Trx, reply: NetworkReply, judged: ReplyJudgement): Promise<W | null>;
  after(done: W[]): Promise<void>;
}

type Applier = (trx: Trx, accountId: string, e: ProviderEvent, now: number) => Promise<boolean>;

const refOf = (e: ProviderEvent) => `network-${e.id}`;

function replyOf(accountId: string, e: ProviderEvent, at: number): NetworkReply {
  const kind = textOf(e.data.replyKind);
  return {
    accountId,
    eventId: e.id,
    at,
    profileUrl: profileUrlOf(textOf(e.data.profileUrl) || null),
    text: textOf(e.data.text),
    bridgeKind: (REPLY_KINDS as readonly string[]).includes(kind) ? (kind as ReplyKind) : null,
  };
}

/** Replies of one page judged at once (a page holds up to 100; the model answers each within its timeout). */
const JUDGED_AT_ONCE = 8;

/**
 * Readies a page of network events for the poll's transaction. Replies not counted yet are judged
 * first, JUDGED_AT_ONCE at a time, outside the transaction (one query finds those already counted, so a
 * repeated page asks the model nothing). The applier then, per event: `reply` counts network `reply` (keyed by the event id)
 * and, when this transaction is the one that counted it, applies its effects; `accepted` counts
 * `connection_accepted`. A reply counted by a racing poll meanwhile waits for that poll's commit and
 * then changes nothing here, so each reply is applied exactly once.
 */
export async function networkPage<W>(
  db: Db,
  accountId: string,
  events: ProviderEvent[],
  now: number,
  effects: NetworkReplyEffects<W>,
): Promise<{ apply: Applier; after: () => Promise<void> }> {
  const atOf = (e: ProviderEvent) => (e.at !== null && Number.isInteger(e.at) && e.at <= now ? e.at : now);
  const replies = events.filter((e) => e.type === 'reply');
  const counted = await countedRefs(db, accountId, 'network', 'reply', replies.map(refOf));
  const judged = new Map<string, ReplyJudgement | null>();
  const toJudge = [...new Map(replies.filter((e) => !counted.has(refOf(e))).map((e) => [e.id, e])).values()];
  // A few at once: with the llm brain each is a model call within its own timeout (judge never throws).
  let next = 0;
  const judgeNext = async (): Promise<void> => {
    for (let e = toJudge[next++]; e; e = toJudge[next++]) judged.set(e.id, await effects.judge(replyOf(accountId, e, atOf(e))));
  };
  await Promise.all(Array.from({ length: Math.min(JUDGED_AT_ONCE, toJudge.length) }, judgeNext));
  const done: W[] = [];
  const apply: Applier = async (trx, _accountId, e) => {
    const at = atOf(e);
    if (e.type === 'reply') {
      const judgement = judged.get(e.id);
      // Already counted (by an earlier poll), or an automatic reply: nothing to do.
      if (!judgement) return true;
      if (!(await recordChannelEvent(trx, accountId, { channel: 'network', type: 'reply', at, refId: refOf(e) }))) return true;
      const w = await effects.apply(trx, replyOf(accountId, e, at), judgement);
      if (w !== null) done.push(w);
      return true;
    }
    if (e.type === 'accepted') {
      await recordChannelEvent(trx, accountId, { channel: 'network', type: 'connection_accepted', at, refId: refOf(e) });
      return true;
    }
    return false;
  };
  return { apply, after: () => (done.length ? effects.after(done) : Promise.resolve()) };
}
