import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { Logger } from '../logger.js';

/**
 * Recording an outcome the process knows (the provider's 250, or its refusal) is retried this many
 * times, waiting RECORD_BACKOFF_MS doubling (0.5, 1, 2, 4 s), and never past RECORD_DEADLINE_MS after
 * the first try. Only then is the send handed to reconciliation, which for SMTP can end in a question
 * to a person: a database blip must not turn a known answer into one.
 */
export const RECORD_TRIES = 5;
export const RECORD_BACKOFF_MS = 500;
export const RECORD_DEADLINE_MS = 10_000;

/** SQLSTATEs worth another try: connection loss, server shutting down, serialization, deadlock, too many connections. */
const TRANSIENT_SQLSTATE = /^(08|57P)|^(40001|40P01|53300)$/;

/**
 * A failure another try may not repeat. Postgres's own answers count only for the states above; a
 * programming error never does. Everything else (a dropped socket, a refused connection, the pool's
 * acquire timeout) is the database out of reach for now.
 */
function transient(err: unknown): boolean {
  if (err instanceof pg.DatabaseError) return TRANSIENT_SQLSTATE.test(err.code ?? '');
  return !(err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError);
}

/** Runs `write` (an idempotent, conditional update) until it succeeds, within the bounds above; rethrows the last failure. */
export async function recordKnownOutcome<T>(
  log: Logger,
  sendId: string,
  outcome: 'sent' | 'not_sent',
  write: () => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + RECORD_DEADLINE_MS;
  for (let attempt = 1; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      const wait = RECORD_BACKOFF_MS * 2 ** (attempt - 1);
      if (attempt >= RECORD_TRIES || !transient(err) || Date.now() + wait > deadline) throw err;
      log.warn({ sendId, outcome, attempt, err: (err as Error).message }, "a send's outcome is not recorded yet; trying again");
      await sleep(wait);
    }
  }
}
