import { getAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite, recordAudit, type Actor } from '../audit/audit.service.js';
import type { Db } from '../db.js';
import type { Deps } from '../deps.js';
import { BadGateway, BadRequest, NotFound, RateLimited, Rejected, Unavailable } from '../errors.js';
import { newId } from '../ids.js';
import { agentOutcome } from './agent-outcome.js';
import { generateHookToken, hashHookToken, hookUrl } from './hook-token.js';
import { logAndHandOn, type IntakeDeps } from './intake.service.js';
import { announceToken, withdrawToken, type LiveHook } from './live-hooks.js';
import { webhooksRepository } from './webhooks.repository.js';
import { HOOK_LABEL, HOOK_LABEL_RULE, MAX_ACTIVE_HOOKS, type AgentOutcome, type Hook, type Outcome } from './webhooks.types.js';

/**
 * Inside the transaction, before it commits: a live URL must be known to intake before it works. With
 * Redis away the write is refused and rolled back, like `token revoke` (`temporarily unavailable`).
 */
async function announce(deps: Pick<Deps, 'config' | 'db' | 'redis'>, tokenHash: string, hook: LiveHook): Promise<void> {
  try {
    await announceToken(deps.redis, deps.config, tokenHash, hook);
  } catch {
    throw new Unavailable();
  }
}

const tooMany = () => new Rejected(`account already has ${MAX_ACTIVE_HOOKS} active hooks; disable or delete one first`);

/**
 * The hook, or NotFound. With `by` (a dashboard person's write) the hook must be of that person's account:
 * another account's hook is the same NotFound as an unknown one. Without it, the operator acts (the CLI).
 */
async function loadHook(db: Db, hookId: string, by?: Actor): Promise<Hook> {
  const hook = await webhooksRepository(db).findHook(hookId);
  if (!hook || (by && hook.accountId !== by.accountId)) throw new NotFound();
  return hook;
}

/** Who a write to the hook is audited as: the dashboard person, or the operator's CLI verb. */
const actorFor = (hook: { accountId: string }, verb: string, by?: Actor): Actor => by ?? adminActor(hook.accountId, verb);

/**
 * Creates a hook and returns its URL, the only time the token is ever seen (only its hash is kept).
 * The account row is locked so two concurrent creates cannot both pass the 20-active-hooks check.
 */
export async function createHook(
  deps: Pick<Deps, 'config' | 'db' | 'redis'>,
  baseUrl: string,
  input: { accountId: string; label: string },
  by?: Actor,
): Promise<{ hookId: string; url: string }> {
  if (!HOOK_LABEL.test(input.label)) throw new BadRequest(HOOK_LABEL_RULE);
  return auditedWrite(deps.db, actorFor(input, 'hook create', by), async (trx) => {
    await getAccount(trx, input.accountId, true);
    const repo = webhooksRepository(trx);
    if ((await repo.countActive(input.accountId)) >= MAX_ACTIVE_HOOKS) throw tooMany();
    const token = generateHookToken();
    const hookId = newId('hook');
    const tokenHash = hashHookToken(token);
    await repo.insertHook({ id: hookId, accountId: input.accountId, label: input.label, tokenHash, at: Date.now() });
    await announce(deps, tokenHash, { accountId: input.accountId, hookId });
    return { result: { hookId, url: hookUrl(baseUrl, token) }, targetId: hookId };
  });
}

/**
 * Disable, delete and regenerate end a token's life for intake inside the transaction that ends it,
 * while the hook row is locked: writes to one hook are serialised by that lock, so the registry
 * changes in the order the commits do. If the transaction then fails, the token is put back (best
 * effort: a missing live token is the one wrong state, an extra one only costs Postgres lookups).
 */
async function restoreIfLive(
  deps: Pick<Deps, 'config' | 'db' | 'redis'>,
  ended: { tokenHash: string; hook: LiveHook } | null,
): Promise<void> {
  if (ended) await announceToken(deps.redis, deps.config, ended.tokenHash, ended.hook).catch(() => {});
}

/**
 * Ends a hook's URL (disable or delete): the live token is withdrawn inside the transaction, under the
 * hook's row lock, and put back if the transaction fails, so a URL is never dead in Redis but live in Postgres.
 */
async function endHook(
  deps: Pick<Deps, 'config' | 'db' | 'redis'>,
  hookId: string,
  verb: 'hook disable' | 'hook delete',
  apply: (repo: ReturnType<typeof webhooksRepository>, accountId: string) => Promise<unknown>,
  by?: Actor,
): Promise<void> {
  const hook = await loadHook(deps.db, hookId, by);
  let ended: { tokenHash: string; hook: LiveHook } | null = null;
  try {
    await auditedWrite(deps.db, actorFor(hook, verb, by), async (trx) => {
      const repo = webhooksRepository(trx);
      const current = await repo.findHook(hookId, true);
      if (!current) throw new NotFound();
      const tokenHash = await repo.tokenHashOf(hookId);
      if (tokenHash && current.status === 'active') ended = { tokenHash, hook: { accountId: hook.accountId, hookId } };
      if (tokenHash) await withdrawToken(deps.redis, deps.config, tokenHash);
      await apply(repo, hook.accountId);
      return { result: undefined, targetId: hookId };
    });
  } catch (err) {
    await restoreIfLive(deps, ended);
    throw err;
  }
}

/** Disabling stops the URL at once (the same 404 as an unknown one); disabling twice is a no-op. */
export function disableHook(deps: Pick<Deps, 'config' | 'db' | 'redis'>, hookId: string, by?: Actor): Promise<void> {
  return endHook(deps, hookId, 'hook disable', (repo, accountId) => repo.setStatus(accountId, hookId, 'disabled', Date.now()), by);
}

/** The same URL works again; refused when the account already has 20 active hooks. */
export async function enableHook(deps: Pick<Deps, 'config' | 'db' | 'redis'>, hookId: string, by?: Actor): Promise<void> {
  const hook = await loadHook(deps.db, hookId, by);
  await auditedWrite(deps.db, actorFor(hook, 'hook enable', by), async (trx) => {
    await getAccount(trx, hook.accountId, true);
    const repo = webhooksRepository(trx);
    const current = await repo.findHook(hookId, true);
    if (!current) throw new NotFound();
    if (current.status !== 'active') {
      if ((await repo.countActive(hook.accountId)) >= MAX_ACTIVE_HOOKS) throw tooMany();
      await repo.setStatus(hook.accountId, hookId, 'active', Date.now());
    }
    // Also when it was active already: announcing again is harmless and heals a lost field.
    const tokenHash = await repo.tokenHashOf(hookId);
    if (tokenHash) await announce(deps, tokenHash, { accountId: hook.accountId, hookId });
    return { result: undefined, targetId: hookId };
  });
}

/** A new URL for the same hook (label, log and limits stay); the old URL is a 404 from now on. */
export async function regenerateHook(
  deps: Pick<Deps, 'config' | 'db' | 'redis'>,
  baseUrl: string,
  hookId: string,
  by?: Actor,
): Promise<{ url: string }> {
  const hook = await loadHook(deps.db, hookId, by);
  let ended: { tokenHash: string; hook: LiveHook } | null = null;
  try {
    return await auditedWrite(deps.db, actorFor(hook, 'hook regenerate', by), async (trx) => {
      const repo = webhooksRepository(trx);
      const current = await repo.findHook(hookId, true);
      if (!current) throw new NotFound();
      const token = generateHookToken();
      const tokenHash = hashHookToken(token);
      const old = await repo.tokenHashOf(hookId);
      if (current.status === 'active') {
        await announce(deps, tokenHash, { accountId: hook.accountId, hookId });
        if (old) ended = { tokenHash: old, hook: { accountId: hook.accountId, hookId } };
      }
      if (old) await withdrawToken(deps.redis, deps.config, old);
      await repo.setTokenHash(hook.accountId, hookId, tokenHash, Date.now());
      return { result: { url: hookUrl(baseUrl, token) }, targetId: hookId };
    });
  } catch (err) {
    await restoreIfLive(deps, ended);
    throw err;
  }
}

/** Deletes the hook and its delivery log; turns already recorded for the agent stay. */
export function deleteHook(deps: Pick<Deps, 'config' | 'db' | 'redis'>, hookId: string, by?: Actor): Promise<void> {
  return endHook(deps, hookId, 'hook delete', (repo, accountId) => repo.deleteHook(accountId, hookId), by);
}

export async function listHooks(db: Db, accountId: string) {
  await getAccount(db, accountId);
  const hooks = await webhooksRepository(db).listHooks(accountId);
  return hooks.map((h) => ({
    hookId: h.hookId,
    label: h.label,
    status: h.status,
    createdAt: h.createdAt,
    lastDeliveryAt: h.lastDeliveryAt,
  }));
}

export interface DeliveryView {
  deliveryId: string;
  at: number;
  outcome: Outcome;
  bytes: number;
  replayOf: string | null;
  /** Accepted deliveries only: what the agent made of it. */
  agent?: AgentOutcome;
  /** Worker Error only: why. */
  error?: string;
  /**
   * Rate Limited only: how many refused deliveries the entry stands for (refusals of one hook in one
   * minute share an entry) and when the last of them came; `at` is the first, `bytes` the largest.
   */
  count?: number;
  lastAt?: number;
}

/** A hook's delivery log, newest first. */
export async function listDeliveries(db: Db, hookId: string, limit: number): Promise<DeliveryView[]> {
  const hook = await loadHook(db, hookId);
  const deliveries = await webhooksRepository(db).listDeliveries(hookId, limit);
  return Promise.all(
    deliveries.map(async (d) => {
      const view: DeliveryView = { deliveryId: d.deliveryId, at: d.at, outcome: d.outcome, bytes: d.bytes, replayOf: d.replayOf };
      if (d.outcome === 'Accepted') view.agent = await agentOutcome(db, hook.accountId, d.turnId);
      if (d.outcome === 'Worker Error') view.error = d.error ?? 'the agent could not be woken';
      if (d.outcome === 'Rate Limited') Object.assign(view, { count: d.deliveries, lastAt: d.lastAt ?? d.at });
      return view;
    }),
  );
}

/**
 * Hands a logged delivery to the agent again, as a new delivery of the same hook: it goes through
 * the same limits (and is logged Rate Limited when over them) and the same queue.
 */
export async function replayDelivery(
  deps: IntakeDeps,
  deliveryId: string,
  by?: { actor: Actor; hookId: string },
): Promise<{ deliveryId: string; outcome: Outcome }> {
  const repo = webhooksRepository(deps.db);
  const original = await repo.findDelivery(deliveryId);
  // A dashboard replay names the hook in its path: the delivery must be that hook's, in that person's account.
  if (!original || (by && (original.accountId !== by.actor.accountId || original.hookId !== by.hookId))) throw new NotFound();
  if (original.body === null) throw new Rejected('this delivery was rate limited, so its body was not kept; there is nothing to replay');
  const hook = await repo.findHook(original.hookId);
  if (!hook) throw new NotFound();
  if (hook.status !== 'active') throw new Rejected('the hook is disabled; enable it before replaying its deliveries');
  let replayed: { deliveryId: string; outcome: Outcome };
  try {
    replayed = await logAndHandOn(deps, hook, original.body, original.bytes, original.deliveryId);
  } catch (err) {
    if (err instanceof RateLimited) {
      throw new Rejected(
        `rate limited: the hook or the account is at its hourly limit of accepted deliveries; retry in ${err.retryAfterSeconds} seconds`,
      );
    }
    if (err instanceof BadGateway) throw new Rejected(err.error);
    throw err;
  }
  await recordAudit(deps.db, actorFor(hook, 'hook replay', by?.actor), replayed.deliveryId, 200);
  return replayed;
}
