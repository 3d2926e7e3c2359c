import type { Config } from '../config.js';
import type { Deps } from '../deps.js';
import { NotFound } from '../errors.js';
import { operatorMailForward } from '../jobs/inbound-mail.js';
import { enqueue } from '../jobs/registry.js';
import { transportFor } from '../mail/transports.js';
import type { MailMessage } from '../mail/mail.types.js';
import { newId } from '../ids.js';
import type { Queryable } from '../db.js';
import { type OperatorMail, operatorMailRepository } from './operator-mail.repository.js';

/** Keeps a message to postmaster@ for the operator: never parsed, never matched to a lead or an account. */
export async function storeOperatorMail(
  db: Queryable,
  m: { mailFrom: string | null; rcptTo: string[]; clientIp: string | null; helo: string | null; raw: Buffer },
): Promise<string> {
  const id = newId('opm');
  await operatorMailRepository(db).insert({ ...m, id, size: m.raw.length, receivedAt: Date.now() });
  return id;
}

/** Operator mail, newest first, without its bytes (`mail postmaster-list`). */
export async function listOperatorMail(db: Queryable, limit: number): Promise<OperatorMail[]> {
  return operatorMailRepository(db).list(limit);
}

/** One operator message with its text as received (`mail postmaster-read`). */
export async function readOperatorMail(db: Queryable, id: string): Promise<OperatorMail & { raw: string }> {
  const found = await operatorMailRepository(db).find(id);
  if (!found) throw new NotFound();
  return { ...found, raw: found.raw.toString('utf8') };
}

/** Forward tries of one message (jobs and sweeps together) before it is left for the admin verbs alone. */
export const MAX_FORWARD_TRIES = 5;
/** A message not forwarded this long after it arrived is handed to forwarding again by the inbound sweep. */
const FORWARD_STALE_MS = 60_000;
/** The raw message quoted in a forward, at most (the whole stays readable with `mail postmaster-read`). */
const QUOTED_BYTES = 64 * 1024;

type ForwardDeps = Pick<Deps, 'config' | 'db' | 'logger' | 'queues'>;

/** Queues the forward of a kept message when an operator address is set; a failed enqueue is left to the sweep. */
export async function handOnOperatorMail(deps: Pick<ForwardDeps, 'config' | 'logger' | 'queues'>, id: string): Promise<void> {
  if (!deps.config.inbound.postmasterForwardTo) return;
  await enqueue(deps.queues, operatorMailForward, { id }).catch((err: Error) =>
    deps.logger.warn({ operatorMailId: id, err: err.message }, 'postmaster mail kept but its forward not queued; the sweep will'),
  );
}

/**
 * Sends one kept message to INBOUND_POSTMASTER_FORWARD_TO through the service's own mail transport: a new
 * message from MAIL_FROM that quotes what arrived (never the stranger's message re-sent under our name), under
 * the idempotency key `opm-<id>`, so a provider that dedupes keys delivers it once. Tries are counted on the row
 * and capped; a message already forwarded is left alone. Throws to be retried.
 */
export async function forwardOperatorMail(deps: ForwardDeps, id: string): Promise<'forwarded' | 'skipped'> {
  const to = deps.config.inbound.postmasterForwardTo;
  if (!to) return 'skipped';
  const repo = operatorMailRepository(deps.db);
  if ((await repo.countForwardTry(id, MAX_FORWARD_TRIES)) === null) return 'skipped';
  const found = await repo.find(id);
  if (!found) return 'skipped';
  await transportFor(deps.config, deps.db).send(forwardOf(deps.config, found, to), `opm-${id}`);
  await repo.markForwarded(id, Date.now());
  deps.logger.info({ operatorMailId: id }, 'postmaster mail forwarded to the operator');
  return 'forwarded';
}

/** Hands kept messages whose forward never ran (a lost enqueue, a crash, retries used up) back to forwarding. */
export async function sweepOperatorMail(deps: ForwardDeps, now = Date.now()): Promise<number> {
  if (!deps.config.inbound.postmasterForwardTo) return 0;
  const ids = await operatorMailRepository(deps.db).unforwarded(now - FORWARD_STALE_MS, MAX_FORWARD_TRIES, 100);
  for (const id of ids) await handOnOperatorMail(deps, id);
  return ids.length;
}

function forwardOf(config: Config, m: OperatorMail & { raw: Buffer }, to: string): MailMessage {
  const head = m.raw.subarray(0, QUOTED_BYTES).toString('utf8');
  const cut = m.raw.length > QUOTED_BYTES ? `\n[… ${m.raw.length - QUOTED_BYTES} more bytes: mail postmaster-read --id ${m.id}]\n` : '';
  const text = [
    `A message to postmaster@${config.inbound.domain} arrived at the inbound SMTP listener.`,
    'Nothing about its sender is verified; it changed no account, lead or block list.',
    '',
    `Id: ${m.id}`,
    `Envelope sender: ${m.mailFrom ?? '(none)'}`,
    `Client: ${m.clientIp ?? 'unknown'} (HELO ${m.helo ?? 'none'})`,
    `Size: ${m.size} bytes`,
    '',
    '----- the message as received -----',
    head + cut,
  ].join('\n');
  return { from: config.mail.from, to, subject: `Mail to postmaster@${config.inbound.domain} (${m.id})`, text };
}
