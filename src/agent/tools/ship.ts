import { z } from 'zod';
import { cannotShip, type ShippingHere } from '../../channels/registry.js';
import { isBlocked } from '../../blocklist/blocklist.service.js';
import { followUpsProblem } from '../../mail/sequence-steps.js';
import { KINDS_OF_WORK, type KindOfWork, needsApproval } from '../../review/approval.service.js';
import { outboundTexts } from '../../review/cards/private-text.js';
import { ToolRefused } from '../core/brain.js';
import { laterRepliesNote } from '../replies/reply-wakes.js';
import { refuseUnbackedClaim } from './claims.js';
import { workCard } from '../../review/file-work.service.js';
import { fileWork } from './file-work.js';
import { refusePrivateText } from './private-text.js';
import { defineTool, text, type ToolContext } from './tool.js';

/** Kinds of work the `ship` tool files directly. */
const SHIPPABLE = KINDS_OF_WORK.filter((k) => k !== 'experiment') as [
  Exclude<KindOfWork, 'experiment'>,
  ...Exclude<KindOfWork, 'experiment'>[],
];

const input = z.object({
  // An experiment is proposed with its plan (propose_experiment), never shipped bare.
  work: z.enum(SHIPPABLE),
  title: text(200),
  to: z.string().max(320).optional(),
  subject: z.string().max(16_000).optional(),
  body: z.string().max(16_000).optional(),
  amount: z.number().nonnegative().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});

/** What the ship tool can do on this account now, from the channel registry (never a fixed list). */
function describe(here: ShippingHere): string {
  // Only the kinds this tool files (an experiment is proposed with propose_experiment).
  const ships = here.ships.filter((k) => (SHIPPABLE as readonly string[]).includes(k));
  const can = ships.length
    ? `Kinds that can ship on this account now: ${ships.join(', ')}.`
    : 'No kind of work can ship on this account now.';
  const cannot = here.waits
    .filter((w) => (SHIPPABLE as readonly string[]).includes(w.kind))
    .map((w) => `${w.kind} (${w.reason})`)
    .join('; ');
  return (
    `Ship work (${SHIPPABLE.join(', ')}). It waits as a review card unless the account lets that kind run without ` +
    `approval; spend always waits. ` +
    'A blog_post: subject is its title, body its Markdown; details may carry excerpt, tags, author, the slug of a post ' +
    "to update, and op 'unpublish' (with that slug) to take it down. A network_message: to is a profile URL " +
    "(https://www.linkedin.com/in/<slug>), body the message; details.mode 'connect' makes it a connection request instead. " +
    `${can}${cannot ? ` Not here: ${cannot}; such a card waits and cannot be approved until the connection exists.` : ''}`
  );
}

/** Files the ship tool's work as a card (or ships it by the account's setting) and says which. */
async function shipWork(args: z.output<typeof input>, ctx: ToolContext): Promise<string> {
  // Nobody on the block list is ever drafted to (the send path checks again at send time).
  if (args.to !== undefined && (await isBlocked(ctx.db, ctx.accountId, args.to))) {
    throw new ToolRefused(`${args.to} is on the block list, so nothing was drafted to it`);
  }
  if (args.work === 'sequence') {
    const problem = args.to ? followUpsProblem(args.details ?? {}) : 'a sequence needs `to`';
    if (problem) throw new ToolRefused(`not a valid sequence (${problem}), so nothing was drafted`);
  }
  const approval = await needsApproval(ctx.db, ctx.accountId, args.work);
  const work = { accountId: ctx.accountId, turnId: ctx.turnId, fromOutside: ctx.fromOutside, ...args };
  await refusePrivateText(ctx, outboundTexts(workCard(work, approval)));
  const missing = await cannotShip(ctx.db, ctx.accountId, args.work);
  const prompt = (needs: boolean) =>
    laterRepliesNote(ctx, needs ? 'Review before it ships.' : 'This account lets this kind of work run without approval.');
  const { card } = await fileWork(ctx.db, { ...work, prompt }, approval);
  // Freed by the account setting: the review queue ships it through its fenced send path, decided by `setting`.
  if (!approval) {
    if (card.autoResolveAt !== null) return `${args.work} runs without approval on this account; card ${card.id} ships it now`;
    if (card.fromOutside) return `${args.work} came from outside data, so it waits for review as card ${card.id}; nothing was shipped`;
  }
  if (missing) return `${args.work} waits as card ${card.id} and cannot ship until connected (${missing}); nothing was shipped`;
  return `${args.work} is waiting for review as card ${card.id}; nothing was shipped`;
}

/**
 * Work to ship. Nothing here ships: the work becomes a review card, which the review queue ships through the kind's
 * channel adapter (src/channels/) once approved or due.
 */
export const ship = defineTool({
  name: 'ship',
  description: describe,
  input,
  async handler(given, ctx) {
    // A mail about a topic an experiment decided starts from its adopted default, and the result says so.
    const { args, used } = await ctx.doors.adoptedDefaults(ctx, given);
    refuseUnbackedClaim([args.subject ? args.title.replace(args.subject, '') : args.title], args.details ?? {});
    return `${await shipWork(args, ctx)}${used}`;
  },
});
