/**
 * The agent's `propose_experiment` tool (docs/decisions/experiments.md, "The agent's tools: propose_experiment and
 * read_results"): files an experiment with its plan (src/experiments/experiments.service.ts proposeExperiment).
 */
import { z } from 'zod';
import { THINGS } from '../../experiments/experiment.js';
import { proposeExperiment as fileProposal } from '../../experiments/experiments.service.js';
import { kindOf } from '../../experiments/variants/registry.js';
import { WAIT_TOOL_ARGS } from '../../experiments/variants/sequence-wait.js';
import { needsApproval } from '../../review/approval.service.js';
import { METRICS } from '../../statistics/plan.js';
import { ToolRefused } from '../core/brain.js';
import { turnReading } from '../core/doors.js';
import { defineTool, text } from '../tools/tool.js';

const rate = z.number().gt(0).lt(1);

/** The tool's argument schema, in the shape both brains were agreed on. */
export const PROPOSE_EXPERIMENT_ARGS = z.object({
  thing: z.enum(THINGS),
  topic: text(200),
  // A mail experiment's draft and challengers (a sequence wait's: waits in days, with steps and step; a send window's:
  // windows instead); an ad experiment's ads, budget and duration instead (src/experiments/variants/ad.ts).
  subject: text(200).optional(),
  body: text(16_000).optional(),
  challengers: z
    .array(z.union([text(200), z.number()]))
    .max(3)
    .default([]),
  ...WAIT_TOOL_ARGS,
  /** send_window: 2 to 4 windows of the day, "HH:MM–HH:MM", in `timeZone` (an IANA name; UTC when absent). */
  windows: z.array(text(40)).max(4).optional(),
  timeZone: text(64).optional(),
  ads: z
    .array(z.object({ headline: text(200), body: text(1_000), url: z.string().trim().max(2_048).optional() }))
    .min(2)
    .max(4)
    .optional(),
  /** post_title: the post it publishes (its title is A); challengers are 1 to 3 other titles. */
  post: z
    .object({ title: text(200), markdown: text(16_000), excerpt: text(300).optional(), tags: z.array(text(60)).max(20).optional() })
    .optional(),
  budgetCap: z.number().optional(),
  currency: z.string().max(8).optional(),
  durationDays: z.number().optional(),
  hypothesis: z.string().trim().max(500).optional(),
  metric: z.enum(Object.keys(METRICS) as [keyof typeof METRICS, ...(keyof typeof METRICS)[]]).optional(),
  baselineRate: rate.optional(),
  minimumDetectableEffect: rate.optional(),
});

export const proposeExperiment = defineTool({
  name: 'propose_experiment',
  description:
    'Propose an A/B test of mail about a topic: thing (mail_subject or mail_opening) is what varies; subject and body are the ' +
    'draft every variant starts from (its own subject or opening is the control, A); challengers are 1 to 3 other subjects ' +
    'or openings. With thing sequence_wait the wait before one follow-up varies: subject and body are the first mail, ' +
    'steps its follow-ups, step which follow-up (its own delayDays is the control), challengers 1 to 3 other waits in days. ' +
    'For thing send_window, give no challengers but windows: 2 to 4 non-overlapping times of day, each ' +
    '"HH:MM–HH:MM" of at least 30 minutes, in timeZone (an IANA name such as Europe/Berlin; UTC when absent); each ' +
    "contact's mail goes out inside its window. " +
    'It plans the sample, picks contacts never mailed, and waits for approval as an `experiment` card. ' +
    'Refused, with nothing written, when too few contacts could join. thing ad_variant tests ads instead: ads are 2 to 4 ' +
    '{ headline, body, url? } (the first is the control), with budgetCap (minor units), currency and durationDays for the one ' +
    'ad test it files when approved; metric click_rate (default) or conversion_rate; the ad platform splits the impressions. ' +
    "It needs the account's ads connection and a monthly spend cap that leaves room for the budget. thing post_title tests a " +
    "blog post's title: post is { title, markdown, excerpt?, tags? } (its title is the control), challengers 1 to 3 other " +
    'titles; metric click_rate (default: readers who click a link in the post) or conversion_rate; when approved it files one ' +
    "blog post card, and the site's readers each see one title.",
  input: PROPOSE_EXPERIMENT_ARGS,
  async handler(args, ctx) {
    const ads = args.thing === 'ad_variant';
    const post = args.thing === 'post_title';
    const windows = args.thing === 'send_window';
    if (post && !args.post) throw new ToolRefused('no experiment was proposed: a post-title experiment needs the post');
    if (!ads && !post && (!args.subject || !args.body)) {
      throw new ToolRefused('no experiment was proposed: a mail experiment needs subject and body');
    }
    if (!ads && windows === !!args.challengers.length) {
      throw new ToolRefused(
        `no experiment was proposed: ${windows ? 'a send window takes windows, not challengers' : 'name 1 to 3 challengers'}`,
      );
    }
    const out = await fileProposal(
      ctx.db,
      { accountId: ctx.accountId, turnId: ctx.turnId, fromOutside: ctx.fromOutside, readTurn: turnReading },
      {
        thing: args.thing,
        topic: args.topic,
        draft: { subject: args.subject ?? '', body: args.body ?? '', ...(args.steps ? { steps: args.steps } : {}), step: args.step },
        challengers: args.challengers,
        ...(args.windows ? { windows: args.windows } : {}),
        ...(args.timeZone ? { timeZone: args.timeZone } : {}),
        ...(ads
          ? { ad: { ads: args.ads ?? [], budgetCap: args.budgetCap, currency: args.currency, durationDays: args.durationDays } }
          : {}),
        ...(args.post ? { post: args.post } : {}),
        replyWindowMs: ctx.config.experiments.replyWindowMs,
        ...(args.hypothesis ? { hypothesis: args.hypothesis } : {}),
        ...(args.metric ? { metric: args.metric } : {}),
        ...(args.baselineRate !== undefined ? { baselineRate: args.baselineRate } : {}),
        ...(args.minimumDetectableEffect !== undefined ? { minimumDetectableEffect: args.minimumDetectableEffect } : {}),
      },
    );
    if (typeof out === 'string') throw new ToolRefused(`no experiment was proposed: ${out}`);
    if (!(await needsApproval(ctx.db, ctx.accountId, 'experiment'))) {
      return `experiment ${out.id} starts without approval on this account (card ${out.cardId}); ${kindOf(args.thing).startedWorkWaits}`;
    }
    return `experiment ${out.id} is waiting for review as card ${out.cardId}; nothing starts until it is approved`;
  },
});
