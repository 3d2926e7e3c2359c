import type { Config } from '../config.js';
import type { Db } from '../db.js';
import type { Logger } from '../logger.js';
import { transportFor } from '../mail/transports.js';

/** How often a transactional mail is tried, and the pause before each retry. */
const TRIES = 3;
const PAUSE_MS = [2_000, 10_000];

export interface PersonMail {
  to: string;
  subject: string;
  text: string;
}

/**
 * Sends a transactional mail (an invitation, a password reset) through the service's own transport, from
 * MAIL_FROM, in the background: the request that caused it answers without waiting, so neither its answer
 * nor its timing says whether a mail went. Never a review card, never counted in /results. A few tries,
 * then a warning naming the kind and idempotency key only (the link is a secret: it is never logged); the
 * person asks again.
 */
export function sendInBackground(deps: { config: Config; db: Db; logger: Logger }, kind: string, key: string, mail: PersonMail): void {
  const transport = transportFor(deps.config, deps.db);
  const attempt = async (n: number): Promise<void> => {
    try {
      await transport.send({ from: deps.config.mail.from, to: mail.to, subject: mail.subject, text: mail.text }, key);
    } catch (err) {
      if (n + 1 >= TRIES) {
        deps.logger.warn({ kind, key, err: (err as Error).name }, 'dashboard mail not sent');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS[n] ?? 10_000).unref());
      return attempt(n + 1);
    }
  };
  void attempt(0);
}
