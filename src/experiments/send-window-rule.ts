/**
 * The hold rule the composition roots hand to shipping (src/shipping/hold-rule.ts): a mail card that carries a send
 * window (send-window.ts `windowOf`) waits while its window is closed, until it next opens.
 */
import { hhmm, isOpen, minuteOfDay, nextOpening, windowOf } from './send-window.js';

/** Null when the card has no window or it is open at `now`; else when it goes out and why, in words. */
export async function sendWindowHold(
  card: { payload: Record<string, unknown> },
  now: number,
): Promise<{ sendAt: number; window: string; note: string } | null> {
  const w = windowOf(card);
  if (!w || isOpen(w.window, now)) return null;
  const sendAt = nextOpening(w.window, now);
  const local = `${hhmm(minuteOfDay(w.window.zone, now))} ${w.window.zone}`;
  const note =
    `Approved at ${local}, outside its send window ${w.text}: it waits, approved, and goes out when the window opens ` +
    `(${new Date(sendAt).toISOString()}). Dismiss or snooze it to stop that.`;
  return { sendAt, window: w.text, note };
}
