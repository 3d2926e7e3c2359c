import { createBatcher, type Batcher } from '../batcher.js';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { isInfraError } from '../errors.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { CHANNEL_EVENT_TYPES, CHANNELS } from '../results/channel-events.js';
import { isScanner } from './bots.js';
import { isResultsChannel } from './channel-rules.js';
import { LINK_CODE } from './links.js';
import { measurementRepository, type TrackedLink, type VisitRow } from './measurement.repository.js';
import type { Redis } from '../redis.js';
import { clientOf } from './clients.js';
import { hashUserAgent, keyedHash } from './ua-hash.js';
import { visitGate, type GateAnswer, type GateKeys } from './visit-gate.js';

/** The query parameter a landing carries its visit id in (`gvid=vis_…`), for conversions to name. */
export const VISIT_PARAM = 'gvid';

/** Links held in each process's cache. Links never change, so a cached one is never stale. */
const CACHE_SIZE = 10_000;
/** User-Agents remembered per process (each at most AGENT_CACHE_MAX_LENGTH characters; longer ones are not kept). */
const AGENT_CACHE_SIZE = 2_000;
const AGENT_CACHE_MAX_LENGTH = 512;
/**
 * Visits written per statement, and statements in flight, by the group-commit batcher. One in flight:
 * the clicks that arrive while a statement commits are written together by the next, as Postgres
 * groups its own commits. Measured against four in flight (10 clients following links): about half the
 * commits, a quarter less API CPU per click, and a tenth more clicks answered per second.
 */
const MAX_BATCH = 200;
const BATCHES_IN_FLIGHT = 1;

/** A bounded least-recently-used map (a Map keeps insertion order; a hit moves the key to the end). */
class Lru<V> {
  private readonly map = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, v: V): void {
    this.map.delete(key);
    this.map.set(key, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value!);
  }
}

interface PerDb {
  links: Lru<TrackedLink>;
  /** User-Agent → its keyed hash and whether it is a bot: browsers' UAs repeat, so each is judged once. */
  agents: Lru<{ hash: string; bot: boolean }>;
  visits: Batcher<VisitRow, true>;
}

const perDb = new WeakMap<object, PerDb>();

/** The channels a link visit is counted on: those with both event types (the `/results` channels of visits). */
const VISIT_EVENT_CHANNELS = CHANNELS.filter((c) => {
  const types: readonly string[] = CHANNEL_EVENT_TYPES[c].types;
  return isResultsChannel(c) && types.includes('visit') && types.includes('scanner_click');
});

/** Each visit and its channel event (`visit`, or `scanner_click` for a bot): many visits to one statement. */
async function writeVisits(db: Db, rows: VisitRow[]): Promise<true[]> {
  await measurementRepository(db).insertLinkVisits(rows, VISIT_EVENT_CHANNELS, Date.now());
  return rows.map(() => true as const);
}

function stateFor(db: Db): PerDb {
  let s = perDb.get(db);
  if (!s) {
    s = {
      links: new Lru(CACHE_SIZE),
      agents: new Lru(AGENT_CACHE_SIZE),
      visits: createBatcher((rows: VisitRow[]) => writeVisits(db, rows), { maxBatch: MAX_BATCH, maxInFlight: BATCHES_IN_FLIGHT }),
    };
    perDb.set(db, s);
  }
  return s;
}

/**
 * `url` with `gvid=<visitId>` appended to its query; the query as written (not re-encoded the way
 * URLSearchParams would) and the #fragment are kept.
 */
export function withVisitId(url: string, visitId: string): string {
  const u = new URL(url);
  const query = u.search.length > 1 ? `${u.search.slice(1)}&` : '';
  u.search = `?${query}${VISIT_PARAM}=${visitId}`;
  return u.href;
}

/** A User-Agent's keyed hash ('' for none) and whether it is a bot or a link scanner (as a GET; HEAD is judged apart). */
async function judgeAgent(db: Db, state: PerDb, ua: string): Promise<{ hash: string; bot: boolean }> {
  if (!ua) return { hash: '', bot: true };
  const known = state.agents.get(ua);
  if (known) return known;
  const judged = { hash: await hashUserAgent(db, ua), bot: isScanner('GET', ua) };
  if (ua.length <= AGENT_CACHE_MAX_LENGTH) state.agents.set(ua, judged);
  return judged;
}

export interface Followed {
  /** Where to send the reader. */
  location: string;
  /** The visit the reader's `gvid` names; null when none does (a scanner's, an uncounted or an unrecorded visit). */
  visitId: string | null;
  scanner: boolean;
  /** `new`: recorded now; `repeat`: the same browser's earlier visit; `limited`: over a limit, not counted; `lost`: not written. */
  counted: 'new' | 'repeat' | 'limited' | 'lost';
}

/**
 * Records a reader's click through a post's link that carried the reader's token (`?x=`), once; false when the token
 * names no reader of a running experiment on the post. Handed in by the process (the post-title experiment's
 * `readerClicked`, src/experiments/variants/post-title-readers.ts): measurement counts visits and knows no experiment.
 */
export type ReaderClicked = (db: Db, accountId: string, postId: string, token: string, visitId: string, at: number) => Promise<boolean>;

export interface LinkDeps {
  db: Db;
  redis: Redis;
  logger: Logger;
  config: Pick<Config, 'queuePrefix' | 'links'>;
  /** Where a reader's click goes; without it, a reader's token is ignored. */
  readerClicked?: ReaderClicked;
}

/** The gate's keys for this click: keyed hashes of the browser (address, User-Agent, kind) and of its network. */
async function gateKeys(db: Db, link: TrackedLink, ip: string | undefined, uaHash: string, scanner: boolean): Promise<GateKeys> {
  const client = clientOf(ip);
  const [browser, network] = await Promise.all([
    keyedHash(db, `browser\n${client.address}\n${uaHash}\n${scanner ? 'bot' : 'person'}`),
    keyedHash(db, `network\n${client.network}`),
  ]);
  return { accountId: link.accountId, code: link.code, browser: browser.slice(0, 32), network: network.slice(0, 32) };
}

/** The gate's answer; Redis out of reach: `new` (a click counted twice beats a click lost), logged. */
async function throughGate(deps: LinkDeps, keys: GateKeys, visitId: string): Promise<GateAnswer> {
  const { links, queuePrefix } = deps.config;
  const gate = visitGate(deps.redis, queuePrefix, {
    repeatWindowMs: links.repeatWindowMs,
    clientPerHour: links.clientVisitsPerHour,
    codePerHour: links.codeVisitsPerHour,
  });
  try {
    return await gate.pass(keys, visitId);
  } catch (err) {
    deps.logger.warn({ code: keys.code, err: (err as Error).message }, 'tracked link repeat check unreachable; visit counted');
    return { outcome: 'new', visitId };
  }
}

/**
 * Someone (or something) followed `{BASE_URL}/l/{code}`. Null for an unknown or malformed code.
 * The same browser (address, User-Agent, bot or not) following the same link within the repeat window
 * is a repeat: it gets the first visit's `gvid` and nothing is written. Past the account's per-network
 * or the link's hourly limit the reader is redirected and nothing is written (src/measurement/visit-gate.ts).
 * Otherwise the visit and its channel event are recorded before answering (group-committed with other
 * visits), so a conversion naming the `gvid` finds it. A person gets the destination with `gvid`; a bot
 * or a link scanner gets the bare destination and is counted as `scanner_click`. When the visit cannot
 * be written the reader is still sent on, without `gvid` (a lost visit beats a broken link), and it is
 * logged. Throws only when the link itself cannot be read (the database is down and the link is not cached).
 */
export async function followLink(
  deps: LinkDeps,
  code: string,
  request: { method: string; userAgent: string | undefined; ip?: string | undefined; readerToken?: unknown },
): Promise<Followed | null> {
  if (!LINK_CODE.test(code)) return null;
  const state = stateFor(deps.db);
  let cached = state.links.get(code);
  if (!cached) {
    cached = (await measurementRepository(deps.db).linkByCode(code)) ?? undefined;
    if (!cached) return null;
    state.links.set(code, cached);
  }
  const link = cached;
  const bare = (counted: Followed['counted'], scanner: boolean): Followed => ({ location: link.url, visitId: null, scanner, counted });
  let scanner = request.method === 'HEAD';
  let claimed: { keys: GateKeys; visitId: string } | null = null;
  try {
    const agent = await judgeAgent(deps.db, state, request.userAgent?.trim() ?? '');
    scanner = request.method === 'HEAD' || agent.bot;
    const keys = await gateKeys(deps.db, link, request.ip, agent.hash, scanner);
    const gate = await throughGate(deps, keys, newId('vis'));
    if (gate.outcome === 'limited') return bare('limited', scanner);
    if (gate.outcome === 'repeat') {
      if (scanner) return bare('repeat', scanner);
      await readerClick(deps, link, request.readerToken, gate.visitId);
      return { location: withVisitId(link.url, gate.visitId), visitId: gate.visitId, scanner, counted: 'repeat' };
    }
    claimed = { keys, visitId: gate.visitId };
    await state.visits.submit({
      id: gate.visitId,
      account_id: link.accountId,
      channel: link.channel,
      via: 'link',
      link_code: link.code,
      source_type: link.sourceType,
      source_id: link.sourceId,
      card_id: link.cardId,
      lead_id: link.leadId,
      url: link.url,
      referrer: null,
      utm: null,
      ua_hash: agent.hash || null,
      bot: scanner,
      at: Date.now(),
    });
  } catch (err) {
    // The code's destination may carry personal data in its query: log the link's code, not its URL.
    deps.logger.warn({ code, err: (err as Error).message, infra: isInfraError(err) }, 'tracked link visit not recorded; redirected anyway');
    if (claimed) void release(deps, claimed);
    return bare('lost', scanner);
  }
  const visitId = claimed.visitId;
  if (scanner) return bare('new', scanner);
  await readerClick(deps, link, request.readerToken, visitId);
  return { location: withVisitId(link.url, visitId), visitId, scanner, counted: 'new' };
}

/**
 * A person's visit through a post's link carrying a reader's token (`?x=`, src/content/post-title.ts): the reader's
 * click in the post's title experiment, recorded once by the handed `readerClicked`. Anything else, a token that
 * names no reader of the post's running experiment, or a failed write (logged) changes nothing: the redirect stands.
 */
async function readerClick(deps: LinkDeps, link: TrackedLink, token: unknown, visitId: string): Promise<void> {
  if (link.sourceType !== 'post' || typeof token !== 'string' || !deps.readerClicked) return;
  try {
    await deps.readerClicked(deps.db, link.accountId, link.sourceId, token, visitId, Date.now());
  } catch (err) {
    deps.logger.warn({ code: link.code, err: (err as Error).message }, 'reader click not recorded; redirected anyway');
  }
}

/** Best effort: the browser's next click is counted rather than answered with a visit that was never written. */
async function release(deps: LinkDeps, claimed: { keys: GateKeys; visitId: string }): Promise<void> {
  const { links, queuePrefix } = deps.config;
  const gate = visitGate(deps.redis, queuePrefix, { repeatWindowMs: links.repeatWindowMs, clientPerHour: 0, codePerHour: 0 });
  await gate.release(claimed.keys, claimed.visitId).catch(() => undefined);
}
