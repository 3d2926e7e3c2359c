import type { Queryable } from '../db.js';
import type { Thing } from './experiment.js';
import { experimentRows } from './experiment-rows.js';
import { withDefaultAd } from './variants/ad.js';
import { openingOf, withOpening } from './variants/mail-opening.js';
import { withSubject } from './variants/mail-subject.js';
import { kindOf } from './variants/registry.js';
import { withAdoptedWindow } from './variants/send-window.js';
import { withWaitDefaults } from './variants/sequence-wait.js';

/** The ship tool's arguments a mail's adopted defaults may change (the agent's `DraftArgs`). */
export interface DraftArgs {
  work: string;
  title: string;
  subject?: string;
  body?: string;
  details?: Record<string, unknown>;
}

/** A draft about `topic` with the defaults decided experiments made (subject, opening, send window), and which it used. */
export async function withDefaults(
  q: Queryable,
  accountId: string,
  topic: string,
  draft: { subject: string; body: string },
): Promise<{ draft: { subject: string; body: string }; used: Thing[]; values: Partial<Record<Thing, string>> }> {
  const rows = experimentRows(q);
  let out = draft;
  const used: Thing[] = [];
  const values: Partial<Record<Thing, string>> = {};
  // A sequence's waits and an ad have defaults of their own shape (withWaitDefaults, withDefaultAd).
  for (const thing of ['mail_subject', 'mail_opening', 'send_window'] as const) {
    const value = await rows.defaultFor(accountId, thing, topic);
    if (value) {
      // A window leaves the text as it is: it rides on the card (withAdoptedWindow).
      out = thing === 'mail_subject' ? withSubject(out, value) : thing === 'mail_opening' ? withOpening(out, value) : out;
      used.push(thing);
      values[thing] = value;
    }
  }
  return { draft: out, used, values };
}

/**
 * A mail (`email`, or a sequence's first mail) about a topic an experiment decided, with the default it adopted
 * (subject, opening or send window: withDefaults; a sequence's follow-up waits: variants/sequence-wait.ts withWaitDefaults).
 * The topic is `details.topic` when given, else the subject. `used` is what the tool result adds: which default it used, or
 * nothing. An `ad_test` starts from the default ad an ad experiment decided (variants/ad.ts withDefaultAd). The agent's `ship`
 * is handed this as its `adoptedDefaults` door (workers/agent-turns.ts).
 */
export async function withAdoptedDefaults<A extends DraftArgs>(
  ctx: { db: Queryable; accountId: string },
  args: A,
): Promise<{ args: A; used: string }> {
  if (args.work === 'ad_test') return withDefaultAd(ctx.db, ctx.accountId, args);
  if ((args.work !== 'email' && args.work !== 'sequence') || !args.subject?.trim() || args.body === undefined) return { args, used: '' };
  const given = args.details?.topic;
  const topic = typeof given === 'string' && given.trim() ? given.trim() : args.subject.trim();
  const { draft, used, values } = await withDefaults(ctx.db, ctx.accountId, topic, { subject: args.subject, body: args.body });
  const waits = args.work === 'sequence' ? await withWaitDefaults(ctx.db, ctx.accountId, topic, args.details) : null;
  if (!used.length && !waits) return { args, used: '' };
  const value = (t: (typeof used)[number]) =>
    (t === 'mail_subject' ? draft.subject : t === 'mail_opening' ? openingOf(draft.body) : (values[t] ?? '')).slice(0, 200);
  const title = args.title.replace(args.subject, draft.subject).slice(0, 200);
  const words = [...used.map((t) => `${kindOf(t).words} "${value(t)}"`), ...(waits?.words ?? [])].join(' and ');
  const changed = { ...args, ...draft, title, ...(waits ? { details: waits.details } : {}) };
  return { args: withAdoptedWindow(changed, values), used: `; it uses the default an experiment decided for "${topic}": ${words}` };
}
