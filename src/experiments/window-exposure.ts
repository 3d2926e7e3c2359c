/**
 * The exposure of a sent experiment mail that rides in a send window (send-window.ts): counted when the send was
 * recorded inside its window; a send recorded outside it (settled late, after an outage) is not counted for its
 * variant: the assignment is marked skipped with the time it went out, so it is neither exposed nor pending.
 */
import type { Queryable } from '../db.js';
import { experimentsRepository } from './experiments.repository.js';
import { hhmm, isOpen, minuteOfDay, windowOf } from './send-window.js';

/** The on-sent hook handed to shipping (src/shipping/hold-rule.ts): a mail of an experiment exposes its contact. */
export async function exposeExperimentMail(
  q: Queryable,
  accountId: string,
  card: { id: string; payload: Record<string, unknown> },
  at: number,
): Promise<void> {
  // Its contact is exposed to the variant it was assigned before the mail was drafted (not outside its window).
  if (typeof card.payload.experimentId === 'string') await exposeSent(q, accountId, card, at);
}

/** The mail of `card` went out at `at`: its contact exposed (the first send counts), unless outside the card's window. */
export async function exposeSent(q: Queryable, accountId: string, card: { id: string; payload: Record<string, unknown> }, at: number) {
  const w = windowOf(card);
  if (w && !isOpen(w.window, at)) {
    const zone = w.window.zone;
    await q('experiment_assignments')
      .where({ account_id: accountId, card_id: card.id })
      .whereNull('exposed_at')
      .whereNull('skipped')
      .update({ skipped: `sent at ${hhmm(minuteOfDay(zone, at))} ${zone}, outside its window ${w.text}`.slice(0, 200) });
    return;
  }
  await experimentsRepository(q).exposed(accountId, card.id, at);
}
