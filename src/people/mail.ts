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

/** The invitation's mail: who invites, to which account, as what, and the link with when it stops working. */
export function invitationMail(i: {
  email: string;
  accountName: string;
  role: 'owner' | 'member';
  inviterName?: string | undefined;
  link: string;
  invitation: { expiresAt: number };
}): PersonMail {
  const who = i.inviterName ? `${i.inviterName} invited you` : 'You are invited';
  const as = i.role === 'owner' ? 'an owner' : 'a member';
  const until = new Date(i.invitation.expiresAt).toUTCString();
  return {
    to: i.email,
    subject: `You are invited to ${i.accountName} on Growth Agent`,
    text: [
      `${who} to ${i.accountName} as ${as}.`,
      '',
      `Set your name and password here (the link works once, until ${until}):`,
      i.link,
      '',
      'If you did not expect this, ignore this mail.',
      '',
    ].join('\n'),
  };
}

/** The password reset's mail: the link, when it stops working, and that nothing changes if it was not them. */
export function resetMail(r: { email: string; link: string; expiresAt: number }): PersonMail {
  const until = new Date(r.expiresAt).toUTCString();
  return {
    to: r.email,
    subject: 'Reset your Growth Agent password',
    text: [
      `Someone asked to reset the password of ${r.email}.`,
      '',
      `Set a new one here (the link works once, until ${until}):`,
      r.link,
      '',
      'If it was not you, ignore this mail: your password stays as it is.',
      '',
    ].join('\n'),
  };
}

/** The sign-in alert: when, from which network and browser, and what to do if it was not them. */
export function signInAlertMail(a: { email: string; accountName: string; at: number; network: string; browser: string }): PersonMail {
  return {
    to: a.email,
    subject: 'New sign-in to your Growth Agent account',
    text: [
      `Someone signed in to ${a.accountName} on Growth Agent as ${a.email} from a device and network not seen recently.`,
      '',
      `When: ${new Date(a.at).toUTCString()}`,
      `Network: ${a.network}`,
      `Browser: ${a.browser}`,
      '',
      'If it was you, there is nothing to do.',
      'If it was not, reset your password (this ends every session) and turn on the authenticator code.',
      '',
    ].join('\n'),
  };
}
