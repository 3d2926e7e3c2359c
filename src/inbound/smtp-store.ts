import { storeInbound, type IntakeDeps } from './intake.service.js';
import { handOnOperatorMail, storeOperatorMail } from './operator-mail.service.js';
import { messageAccount, type Refusal } from './smtp-recipients.js';

export interface TakenMessage {
  /** The account each recipient names (null: the bare bounce address, or postmaster). */
  accounts: (string | null)[];
  raw: Buffer;
  rcptTo: string[];
  mailFrom: string | null;
  clientIp: string | null;
  helo: string | null;
}

/**
 * Stores a message the listener took, before its 250. Mail to postmaster (alone in its transaction) is the
 * operator's: kept in `operator_mail` (and forwarded to INBOUND_POSTMASTER_FORWARD_TO when set), never parsed,
 * matched or charged to an account. Any other is stored under its account: the one its tokens name, else what the
 * message names of ours (refused when it names none, or its account is full). Throws when Postgres does not answer
 * (the caller answers 451).
 */
export async function storeTaken(
  deps: IntakeDeps,
  m: TakenMessage,
  toOperator: boolean,
): Promise<{ ok: true; id: string } | { ok: false; error: Refusal }> {
  const { accounts, ...envelope } = m;
  if (toOperator) {
    const id = await storeOperatorMail(deps.db, envelope);
    await handOnOperatorMail(deps, id);
    return { ok: true, id };
  }
  const placed = await messageAccount(deps, accounts, m.raw, m.rcptTo);
  if (!placed.ok) return placed;
  return { ok: true, id: await storeInbound(deps, { accountId: placed.accountId, via: 'smtp', ...envelope }) };
}
