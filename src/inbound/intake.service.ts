import { getAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite } from '../audit/audit.service.js';
import type { Db } from '../db.js';
import type { Deps } from '../deps.js';
import { isInfraError } from '../errors.js';
import { newId, randomBase62 } from '../ids.js';
import { inboundParse } from '../jobs/inbound-mail.js';
import { enqueue } from '../jobs/registry.js';
import type { Logger } from '../logger.js';
import { hashToken } from '../tokens/token-format.js';
import { inboundRepository, type InboundMessage, type NewInbound } from './inbound.repository.js';
import type { InboundStatus } from './inbound.types.js';
import { inboundUrlsRepository } from './inbound-urls.repository.js';
import { announceSecret, liveInbound, withdrawSecret } from './live-inbound.js';
import { processInbound, type InboundDeps } from './process.service.js';

/** What storing and handing on a received message needs: Postgres and the producer queues. */
export type IntakeDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'queues'>;

/** Where providers POST received mail: `<BASE_URL>/api/mail/inbound/<secret>`. */
export const INBOUND_PATH = '/api/mail/inbound';
const SECRET_PREFIX = 'inb_';
/** 40 base62 characters: about 238 bits from a CSPRNG, as hook tokens. */
const SECRET_LENGTH = 40;

/** Processing tries a message gets (jobs and sweeps together) before it is kept as `malformed`. */
export const MAX_PARSE_TRIES = 5;
/**
 * Tries after which a message is kept as `malformed` without being run again: its tries ended with no
 * answer (each killed the worker), or with Postgres or Redis out of reach, which alone never settles it.
 */
export const MAX_COUNTED_TRIES = 2 * MAX_PARSE_TRIES;
/** A message still `received` this long after it arrived is handed to processing again by the sweep. */
export const STALE_AFTER_MS = 60_000;
/** How many messages one run of the sweep (`inbound.sweep`, src/jobs/inbound-mail.ts) hands on at most. */
export const SWEEP_BATCH = 200;

/**
 * Stores one received message whole (the raw bytes as they came) and returns its id. Throws when
 * Postgres does not take it: the SMTP listener then answers 451 (the sender retries), the URL 503.
 */
export async function storeInbound(deps: Pick<IntakeDeps, 'db'>, m: Omit<NewInbound, 'id' | 'receivedAt'>): Promise<string> {
  const id = newId('inb');
  await inboundRepository(deps.db).insert({ ...m, id, receivedAt: Date.now() });
  return id;
}

/** Queues the parse of a stored message; a failed enqueue is logged, not thrown (the sweep repairs it). */
export async function handOn(deps: Pick<IntakeDeps, 'logger' | 'queues'>, id: string): Promise<boolean> {
  try {
    await enqueue(deps.queues, inboundParse, { id });
    return true;
  } catch (err) {
    deps.logger.warn({ inboundId: id, err: (err as Error).message }, 'inbound message stored but not queued; the sweep will');
    return false;
  }
}

/** Stores, then hands on: the caller may answer "taken" once this resolves. */
export async function receiveInbound(deps: IntakeDeps, m: Omit<NewInbound, 'id' | 'receivedAt'>): Promise<string> {
  const id = await storeInbound(deps, m);
  await handOn(deps, id);
  return id;
}

/**
 * Makes the account's inbound URL, shown once: a new random secret whose SHA-256 alone is stored.
 * An account has one; a second call replaces it (the old URL answers 404 from the commit on). The new
 * secret is announced to the live-secrets registry in Redis before the commit (no Redis, no new URL),
 * the one it replaced withdrawn after (src/inbound/live-inbound.ts).
 */
export async function createInboundUrl(
  deps: Pick<Deps, 'db' | 'redis'> & { config: Pick<Deps['config'], 'baseUrl' | 'queuePrefix'> },
  accountId: string,
): Promise<{ url: string }> {
  let replaced: string | null = null;
  const made = await auditedWrite(deps.db, adminActor(accountId, 'mail inbound-url'), async (trx) => {
    await getAccount(trx, accountId, true);
    const secret = `${SECRET_PREFIX}${randomBase62(SECRET_LENGTH)}`;
    const secretHash = hashToken(secret);
    const id = newId('inu');
    const repo = inboundUrlsRepository(trx);
    replaced = await repo.hashOf(accountId);
    await announceSecret(deps.redis, deps.config, secretHash, accountId);
    await repo.put({ id, accountId, secretHash, at: Date.now() });
    return { result: { url: `${deps.config.baseUrl}${INBOUND_PATH}/${secret}` }, targetId: id };
  });
  if (replaced) await withdrawSecret(deps.redis, deps.config, replaced);
  return made;
}

/**
 * The account an inbound URL's secret belongs to, with the raw inbound bytes it keeps (the storage cap);
 * null for anything else (the caller answers 404). A secret the live-secrets registry in Redis does not
 * know is null without a Postgres statement; only while the registry is not trusted does every secret
 * go to Postgres.
 */
export async function accountForInboundSecret(
  deps: Pick<Deps, 'db' | 'redis' | 'config'>,
  secret: string,
): Promise<{ accountId: string; storedBytes: number } | null> {
  const secretHash = hashToken(secret);
  if (!(await liveInbound(deps).mayBeLive(secretHash))) return null;
  return inboundUrlsRepository(deps.db).accountFor(secretHash);
}

/** What `mail inbound-list` shows of a message: never its bytes, text or parse details. */
export type InboundSummary = Pick<
  InboundMessage,
  | 'id'
  | 'accountId'
  | 'via'
  | 'mailFrom'
  | 'rcptTo'
  | 'size'
  | 'receivedAt'
  | 'status'
  | 'reason'
  | 'kind'
  | 'replyKind'
  | 'sendId'
  | 'leadId'
>;

/** Received messages, newest first: one account's, or every account's. */
export async function listInbound(db: Db, f: { accountId?: string; status?: InboundStatus; limit: number }): Promise<InboundSummary[]> {
  const rows = await inboundRepository(db).list(f);
  return rows.map((m) => ({
    id: m.id,
    accountId: m.accountId,
    via: m.via,
    mailFrom: m.mailFrom,
    rcptTo: m.rcptTo,
    size: m.size,
    receivedAt: m.receivedAt,
    status: m.status,
    reason: m.reason,
    kind: m.kind,
    replyKind: m.replyKind,
    sendId: m.sendId,
    leadId: m.leadId,
  }));
}

/** Hands messages still `received` after STALE_AFTER_MS back to processing (bounded batch; the key dedupes). */
export async function sweepInbound(deps: IntakeDeps, now = Date.now()): Promise<{ requeued: number }> {
  const ids = await inboundRepository(deps.db).stillReceived(now - STALE_AFTER_MS, SWEEP_BATCH);
  let requeued = 0;
  for (const id of ids) if (await handOn(deps, id)) requeued++;
  return { requeued };
}

/**
 * One processing try of a stored message, counted on its row. A message that fails (other than
 * Postgres or Redis being out of reach) on its MAX_PARSE_TRIES-th try or later, or comes up again
 * after MAX_COUNTED_TRIES, is settled `malformed` with the reason and never picked again.
 * Returns `gave-up` when it settled it so, `done` otherwise; rethrows a failure to be retried.
 */
export async function processWithinTries(
  deps: InboundDeps,
  id: string,
  log: Logger,
  run: (deps: InboundDeps, id: string) => Promise<void> = processInbound,
): Promise<'done' | 'gave-up'> {
  const repo = inboundRepository(deps.db);
  const tries = await repo.countAttempt(id);
  const giveUp = async (why: string) => {
    const settled = await repo.settle(id, { status: 'malformed', reason: `could not be processed: ${why}`.slice(0, 500) }, Date.now());
    if (settled) log.warn({ inboundId: id, tries }, 'inbound message kept as malformed: processing kept failing');
    return 'gave-up' as const;
  };
  if (tries > MAX_COUNTED_TRIES) return giveUp(`gave up after ${MAX_COUNTED_TRIES} tries`);
  try {
    await run(deps, id);
    return 'done';
  } catch (err) {
    if (tries < MAX_PARSE_TRIES || isInfraError(err)) throw err;
    return giveUp((err as Error).message || 'unknown error');
  }
}
