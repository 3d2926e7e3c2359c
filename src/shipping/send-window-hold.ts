/**
 * A mail card that carries a send window (`payload.sendWindow`: an experiment's variant, or the default an
 * experiment adopted for its topic) goes out only while the window is open (docs/decisions/experiments.md, "What can
 * vary: the send window"). Approved outside it, by a person, the trust ladder or the account's setting, it is held:
 * the card stays pending with `autoResolveAt` at the window's next opening, and the card-timers deadline (the same
 * guarded auto-resolve the ladder uses, repaired by the card sweep) ships it then through the one fenced path, still
 * recorded as decided by whoever approved it. Nothing is fenced while it waits, so nothing can ship twice: the
 * deadline acts only on a pending card with exactly that deadline, and a person who sends, dismisses or snoozes it
 * first makes the deadline a no-op.
 */
import { isBlocked } from '../blocklist/blocklist.service.js';
import type { Trx } from '../db.js';
import { Rejected } from '../errors.js';
import type { DecidedBy } from '../results/channel-events.js';
import { cardsRepository, type Card } from '../review/cards/cards.repository.js';
import { scheduleAutoResolve } from '../review/timer-jobs.js';
import type { ShipDeps } from './hold-rule.js';

/**
 * A send held for its window. The send route answers it with 409 `rejected` (heldRefusal): its 200 means the provider
 * accepted the mail, and this one has not gone out; the approval is kept all the same.
 */
export interface HeldResult {
  ok: true;
  status: 'held';
  to: string;
  /** When the window opens and the mail goes out (epoch ms). */
  sendAt: number;
  window: string;
  decidedBy: DecidedBy;
}

/** The hold lost to another verb on the card (it changed between its read and the hold). */
export const LOST_HOLD = 'lost';

/**
 * Holds the card until the handed hold rule (hold-rule.ts; the send window) lets it go, when the rule says it waits
 * at `now`; null when it does not (ship now). `run` is the caller's transaction (audited for a person). The hold is
 * one guarded update: pending or snoozed at the version the approver saw (and at the ladder's deadline, for the
 * ladder), so a racing verb wins.
 */
export async function holdUntilWindow(
  deps: ShipDeps,
  card: Card,
  to: string,
  o: { decidedBy: DecidedBy; autoResolveAt?: number; now?: number },
  run: (fn: (trx: Trx) => Promise<Card | null>) => Promise<Card | null>,
): Promise<HeldResult | typeof LOST_HOLD | null> {
  const hold = await deps.holdRule(card, o.now ?? Date.now());
  if (!hold) return null;
  const { sendAt, note } = hold;
  const detail = (card.detail ?? {}) as Record<string, unknown> & { autoResolve?: Record<string, unknown> };
  const held = await run(async (trx) => {
    // Refused now, as a send would be, rather than at the opening.
    if (to && (await isBlocked(trx, card.accountId, to))) throw new Rejected(`${to} is on the block list; nothing was sent`);
    return cardsRepository(trx).transition(
      card.accountId,
      card.id,
      {
        statuses: ['pending', 'snoozed'],
        version: card.version,
        ...(o.autoResolveAt !== undefined ? { autoResolveAt: o.autoResolveAt } : {}),
      },
      {
        status: 'pending',
        snoozedUntil: null,
        autoResolveAt: sendAt,
        // The reason rides in the plan, so a snooze or a change request (which drop the plan) drops it too.
        detail: { ...detail, autoResolve: { ...detail.autoResolve, at: sendAt, by: o.decidedBy, reason: note } },
      },
    );
  });
  if (!held) return LOST_HOLD;
  await scheduleAutoResolve(deps, card.accountId, card.id, sendAt);
  return { ok: true, status: 'held', to, sendAt, window: hold.window, decidedBy: o.decidedBy };
}

/**
 * What the send route answers for a held send: a settled 409 (re-read the card; retrying gets the same answer) whose
 * message says the approval is kept and when the mail goes out.
 */
export const heldRefusal = (h: HeldResult) =>
  new Rejected(
    `not sent now: this mail goes out only inside its send window, ${h.window}; your approval is kept and it goes out ` +
      `when the window opens, at ${new Date(h.sendAt).toISOString()} (dismiss or snooze the card to stop that)`,
  );
