/**
 * The agent's experiment tools (docs/decisions/experiments.md, "The agent's tools: propose_experiment and
 * read_results"): `propose_experiment` files an experiment with its plan (experiments.service.ts proposeExperiment),
 * and `read_results` reads the account's own scoreboard back as facts that carry no outside data: counts and rates
 * per channel, the agent's own work, and one line per experiment. Never a lead's name, a reply's text or an account note.
 */
import { z } from 'zod';
import { THINGS, type Thing } from '../../experiments/experiments.repository.js';
import { experimentFact, readExperiments } from '../../experiments/reading.js';
import { METRICS } from '../../experiments/plan.js';
import { openingOf, THING_WORDS } from '../../experiments/variants.js';
import { getResults, hasReturnPath, type Results } from '../../results/results.service.js';
import { needsApproval } from '../../review/approval.service.js';
import { ToolRefused } from '../core/brain.js';
import { WAIT_TOOL_ARGS, withWaitDefaults } from './experiment-sequence-wait.js';
import { withDefaultAd } from './experiment-ad.js';
import { proposeExperiment, withDefaults } from './experiments.service.js';
import { withAdoptedWindow } from './experiment-send-window.js';
import type { Config } from '../../config.js';
import type { Db } from '../../db.js';

const text = (max: number) => z.string().trim().min(1).max(max);
const rate = z.number().gt(0).lt(1);

/** The two tools' argument schemas, in the shape both brains were agreed on. */
export const EXPERIMENT_TOOL_ARGS = {
  propose_experiment: z.object({
    thing: z.enum(THINGS),
    topic: text(200),
    // A mail experiment's draft and challengers (a sequence wait's: waits in days, with steps and step; a send window's:
    // windows instead); an ad experiment's ads, budget and duration instead (experiment-ad.ts).
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
  }),
  read_results: z.object({}),
} as const;

type Args = typeof EXPERIMENT_TOOL_ARGS;

/** Under whose approval settings the work a started experiment files waits (mail experiments: the email settings). */
const STARTED_WORK_WAITS: Partial<Record<Thing, string>> = {
  sequence_wait: 'its mail waits under the sequence settings',
  ad_variant: 'its ad test waits under the ad test settings',
  post_title: 'its post waits under the blog post settings',
};

export const EXPERIMENT_TOOL_DESCRIPTIONS: Record<keyof Args, string> = {
  propose_experiment:
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
  read_results:
    "Read the account's scoreboard for the last 24 hours and the 24 hours before: counts and rates per channel, your own " +
    'work (turns, cards, approvals), and one line per experiment with its figures. Cite these figures; claim nothing they do not show.',
};

/** A metric's name in words: `replyRate` → "reply rate". */
const words = (key: string) => key.replace(/([A-Z])/g, ' $1').toLowerCase();

/** A count or rate as a fact, its baseline beside it; null (unknown) says so. */
const figure = (v: unknown) => (v === null ? 'unknown' : typeof v === 'number' ? String(v) : null);

/** One channel's numbers (only numbers: the names and titles an ads test carries stay out). */
function metricFacts(window: Record<string, unknown>, baseline: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(window)) {
    const b = baseline[key];
    const now = figure(v);
    if (now !== null) {
      out.push(`${words(key)} ${now} (before ${figure(b) ?? 'unknown'})`);
    } else if (Array.isArray(v)) {
      out.push(`${words(key)} ${v.length} (before ${Array.isArray(b) ? b.length : 0})`);
    } else if (key === 'shipped' && v && typeof v === 'object') {
      out.push(`shipped ${(v as { total: number }).total} (before ${(b as { total?: number } | undefined)?.total ?? 0})`);
    } else if (v && typeof v === 'object') {
      // Conversion value per currency: the currency code and the sum.
      const sums = Object.entries(v as Record<string, unknown>).filter(([, n]) => typeof n === 'number');
      if (sums.length) out.push(`${words(key)} ${sums.map(([c, n]) => `${c} ${n}`).join(', ')}`);
    }
  }
  return out;
}

/** The scoreboard as facts: one line per channel and one for the agent's own work. */
export function resultFacts(r: Results): string[] {
  const hours = Math.round((r.window.until - r.window.since) / 3_600_000);
  const lines = [`Results for the last ${hours} hours (before: the ${hours} hours until then).`];
  for (const channel of ['email', 'ads', 'seo', 'social', 'aeo', 'network'] as const) {
    const s = r[channel];
    if (!s.available) lines.push(`${channel}: not available (${s.reason}).`);
    else lines.push(`${channel}: ${metricFacts(s.data.window, s.data.baseline).join('; ')}.`);
  }
  const h = r.harness.data;
  lines.push(`your work: ${metricFacts({ ...h.window }, { ...h.baseline }).join('; ')}.`);
  return lines;
}

/** What the experiment tools use of the runtime's tool environment (tools.ts ToolEnv). */
interface ToolEnv {
  db: Db;
  accountId: string;
  turnId: string;
  fromOutside: boolean;
  config: Pick<Config, 'experiments' | 'inbound'>;
}

type Handler<K extends keyof Args> = (args: z.output<Args[K]>, env: ToolEnv) => Promise<string>;

export const experimentHandlers: { [K in keyof Args]: Handler<K> } = {
  async propose_experiment(args, env) {
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
    const out = await proposeExperiment(
      env.db,
      { accountId: env.accountId, turnId: env.turnId, fromOutside: env.fromOutside },
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
        ...(args.hypothesis ? { hypothesis: args.hypothesis } : {}),
        ...(args.metric ? { metric: args.metric } : {}),
        ...(args.baselineRate !== undefined ? { baselineRate: args.baselineRate } : {}),
        ...(args.minimumDetectableEffect !== undefined ? { minimumDetectableEffect: args.minimumDetectableEffect } : {}),
      },
    );
    if (typeof out === 'string') throw new ToolRefused(`no experiment was proposed: ${out}`);
    if (!(await needsApproval(env.db, env.accountId, 'experiment'))) {
      const waits = STARTED_WORK_WAITS[args.thing] ?? 'its mail waits under the email settings';
      return `experiment ${out.id} starts without approval on this account (card ${out.cardId}); ${waits}`;
    }
    return `experiment ${out.id} is waiting for review as card ${out.cardId}; nothing starts until it is approved`;
  },
  async read_results(_args, env) {
    const now = Date.now();
    const returnPath = await hasReturnPath(env.db, env.accountId, env.config.inbound.smtpPort);
    const results = await getResults(env.db, env.accountId, undefined, now, returnPath);
    const experiments = await readExperiments(env.db, env.accountId, results.window.since, now - env.config.experiments.replyWindowMs);
    const lines = resultFacts(results);
    lines.push(
      experiments.length
        ? `Experiments (${experiments.length}):\n${experiments.map((e) => `- ${experimentFact(e)}`).join('\n')}`
        : 'Experiments: none is running or proposed, and none ended in this window.',
    );
    return lines.join('\n');
  },
};

interface MailArgs {
  work: string;
  title: string;
  subject?: string;
  body?: string;
  details?: Record<string, unknown>;
}

/**
 * A mail (`email`, or a sequence's first mail) about a topic an experiment decided, with the default it adopted
 * (subject, opening or send window: experiments.service.ts withDefaults; a sequence's follow-up waits: withWaitDefaults).
 * The topic is `details.topic` when given, else the subject. `used` is what the tool result adds: which default it used, or
 * nothing. An `ad_test` starts from the default ad an ad experiment decided (experiment-ad.ts withDefaultAd).
 */
export async function withAdoptedDefaults<A extends MailArgs>(env: ToolEnv, args: A): Promise<{ args: A; used: string }> {
  if (args.work === 'ad_test') return withDefaultAd(env.db, env.accountId, args);
  if ((args.work !== 'email' && args.work !== 'sequence') || !args.subject?.trim() || args.body === undefined) return { args, used: '' };
  const given = args.details?.topic;
  const topic = typeof given === 'string' && given.trim() ? given.trim() : args.subject.trim();
  const { draft, used, values } = await withDefaults(env.db, env.accountId, topic, { subject: args.subject, body: args.body });
  const waits = args.work === 'sequence' ? await withWaitDefaults(env.db, env.accountId, topic, args.details) : null;
  if (!used.length && !waits) return { args, used: '' };
  const value = (t: (typeof used)[number]) =>
    (t === 'mail_subject' ? draft.subject : t === 'mail_opening' ? openingOf(draft.body) : (values[t] ?? '')).slice(0, 200);
  const title = args.title.replace(args.subject, draft.subject).slice(0, 200);
  const words = [...used.map((t) => `${THING_WORDS[t]} "${value(t)}"`), ...(waits?.words ?? [])].join(' and ');
  const changed = { ...args, ...draft, title, ...(waits ? { details: waits.details } : {}) };
  return { args: withAdoptedWindow(changed, values), used: `; it uses the default an experiment decided for "${topic}": ${words}` };
}
