/**
 * The kinds of variant, one per thing that can vary (kind.ts): the one place the experiments' service, pass, counts and
 * follow-ups look a kind up. Typed by `VariantKinds`, so a thing of `THINGS` without its kind, a kind under another
 * thing's key, or a kind missing a part its reach needs does not compile. A new kind of variant is a file in this folder,
 * its thing in `THINGS` (experiment.ts) and a line here.
 *
 * The order is the order in which the defaults of a later mail are named (adopted-defaults.ts) and the kinds' own counts
 * apply (experiment-counts.ts: an ad's reports, then a post's readers still to come).
 */
import type { Thing } from '../experiment.js';
import { adVariant } from './ad.js';
import type { VariantKind, VariantKinds } from './kind.js';
import { mailOpening } from './mail-opening.js';
import { mailSubject } from './mail-subject.js';
import { postTitle } from './post-title.js';
import { sendWindow } from './send-window.js';
import { sequenceWait } from './sequence-wait.js';

export const VARIANT_KINDS: VariantKinds = {
  mail_subject: mailSubject,
  mail_opening: mailOpening,
  send_window: sendWindow,
  sequence_wait: sequenceWait,
  ad_variant: adVariant,
  post_title: postTitle,
};

/** The kind of variant an experiment varies. */
export const kindOf = (thing: Thing): VariantKind => VARIANT_KINDS[thing];

/** The words for what one experiment varies: "the subject line", "the wait before follow-up 2". */
export const thingWords = (thing: Thing, draft: { step?: number }): string => {
  const kind = kindOf(thing);
  return kind.wordsOf?.(draft) ?? kind.words;
};

/** How much longer than the reply window a unit's exposure must be old before it counts (nothing for most kinds). */
export const judgedAfterMs = (e: Parameters<NonNullable<VariantKind['judgedAfterMs']>>[0]): number =>
  kindOf(e.thing).judgedAfterMs?.(e) ?? 0;
