import { openingOf, THING_WORDS } from '../../experiments/variants.js';
import type { DraftArgs, ToolContext } from '../tools/tool.js';
import { withDefaultAd } from './experiment-ad.js';
import { withWaitDefaults } from './experiment-sequence-wait.js';
import { withAdoptedWindow } from './experiment-send-window.js';
import { withDefaults } from './experiments.service.js';

/**
 * A mail (`email`, or a sequence's first mail) about a topic an experiment decided, with the default it adopted
 * (subject, opening or send window: experiments.service.ts withDefaults; a sequence's follow-up waits: withWaitDefaults).
 * The topic is `details.topic` when given, else the subject. `used` is what the tool result adds: which default it used, or
 * nothing. An `ad_test` starts from the default ad an ad experiment decided (experiment-ad.ts withDefaultAd).
 */
export async function withAdoptedDefaults<A extends DraftArgs>(
  ctx: Pick<ToolContext, 'db' | 'accountId'>,
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
  const words = [...used.map((t) => `${THING_WORDS[t]} "${value(t)}"`), ...(waits?.words ?? [])].join(' and ');
  const changed = { ...args, ...draft, title, ...(waits ? { details: waits.details } : {}) };
  return { args: withAdoptedWindow(changed, values), used: `; it uses the default an experiment decided for "${topic}": ${words}` };
}
