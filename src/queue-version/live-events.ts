/**
 * The review queue's live events (docs/dashboard.md, "Live updates"): every committed card write announces
 * itself once, from the one place card writes pass (card-writes.ts). Each event is appended to the account's
 * Redis stream (capped near `backlog` entries, the catch-up a reconnecting reader gets from `Last-Event-ID`)
 * and published, with the stream entry's id, on the account's channel (what open streams listen to), in
 * one script: an event is never published without its place in the backlog, and ids only grow.
 */

/**
 * Who moved a card, in words a person reads: a person's name or token label, `the trust ladder`, `an approval
 * setting`, `timer`, `the agent`, `the service`.
 */
export type ActedBy = string;

export interface CardLiveEvent {
  type: 'card.filed' | 'card.updated';
  cardId: string;
  kind: string;
  status: string;
  /** The card was decided by this write (resolved, dismissed, sent). */
  decided: boolean;
  by: ActedBy;
  at: number;
}

/** A stream entry as readers get it: its id (the `Last-Event-ID` to resume after) and the event. */
export interface LiveEntry {
  id: string;
  event: CardLiveEvent;
}

/** The account's stream and channel; both carry the account's hash tag (one Cluster slot, as the queue version's keys). */
export function liveKeys(keyspace: string, accountId: string): { stream: string; channel: string } {
  return { stream: `${keyspace}:live:{${accountId}}`, channel: `${keyspace}:live:{${accountId}}:ch` };
}

/**
 * KEYS[1] the stream, KEYS[2] the channel (named as a key so a Cluster routes the script by its slot);
 * ARGV[1] the cap, ARGV[2] the event JSON.
 */
export const PUBLISH_LIVE_LUA = `
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[2])
redis.call('PUBLISH', KEYS[2], id .. ' ' .. ARGV[2])
return id
`;

/** A published message (`<id> <json>`) read back. */
export function parseLiveMessage(message: string): LiveEntry | null {
  const space = message.indexOf(' ');
  if (space <= 0) return null;
  try {
    return { id: message.slice(0, space), event: JSON.parse(message.slice(space + 1)) as CardLiveEvent };
  } catch {
    return null;
  }
}

/** Stream ids (`ms-seq`) in order: negative when a is earlier. */
export function compareLiveIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}
