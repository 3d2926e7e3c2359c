/**
 * Experiments the agent runs (docs/decisions/experiments.md): it proposes one as an `experiment` card (the plan in
 * plain words, under the account's approval settings); starting it (the card shipping) records every contact's
 * variant; the maintenance pass drafts each contact's mail as email work (under the email approval settings) and
 * looks at the counts on the plan's schedule; when the stopping rule decides, a card proposes the winner as the
 * default, citing its figures, or says that nothing won. Approving that card makes later drafts use it.
 */
import { createHash } from 'node:crypto';
import { isBlocked } from '../blocklist/blocklist.service.js';
import type { Db } from '../db.js';
import { newId } from '../ids.js';
import { contactStatusPastNew } from '../leads/doors.js';
import { addCard } from '../review/cards/doors.js';
import { privateTextIn } from '../review/cards/private-text.js';
import { cardShape, fileWork } from '../review/file-work.service.js';
import { normaliseContact, VARIANT_KEYS } from '../statistics/assignment.js';
import { DESIGN, type ExperimentPlan, HISTORY, METRICS, type Metric, planExperiment, replanned } from '../statistics/plan.js';
import { sampleRatioCheck } from '../statistics/ratio-check.js';
import { type Decision, decide } from '../statistics/stopping.js';
import { sparedContacts } from '../statistics/waves.js';
import { citation, describePlan } from '../statistics/wording.js';
import { openAudience } from './audience.js';
import type { Experiment } from './experiment.js';
import { fileExperiment, type Proposer } from './experiment-card.js';
import { DEFAULT_OUTCOME_WINDOW_MS } from './experiment-counts.js';
import { experimentsRepository } from './experiments.repository.js';
import { pausedExperiments } from './paused.js';
import { mismatchCard, ratioCounts } from './ratio-mismatch.js';
import type { ContactKind, Proposal } from './variants/kind.js';
import { kindOf, thingWords } from './variants/registry.js';

/** A proposal, whatever varies (variants/kind.ts). */
export type ProposeExperiment = Proposal;

/**
 * Contacts to ask for so that every variant gets `perVariant`: the hash splits at random, so each variant's share
 * varies by about √perVariant; three of those more per variant leave the smallest short about once in a thousand.
 */
export const withRoom = (perVariant: number, variants: number) => variants * Math.ceil(perVariant + 3 * Math.sqrt(perVariant));
const startNeedsApproval = (kind: string) => `Approve to start it; its mail then waits under your ${kind} approval settings.`;
const CONTACT_WORDS = { unit: 'contact', control: 'the current default' };
const START_WITHOUT_APPROVAL = 'This account lets experiments start without approval.';

/**
 * The plan's baseline and effect: the account's own rate of `metric` in its earlier experiments when it has enough
 * history (plan.ts HISTORY; the card says so), else the caller's or the default 4%; the effect the caller's (in points)
 * or, by default, a lift of half the baseline (kept as a lift when the first look replans).
 */
async function planBaseline(
  db: Db,
  accountId: string,
  metric: Metric,
  input: Pick<ProposeExperiment, 'baselineRate' | 'minimumDetectableEffect'>,
  windowMs: number,
): Promise<Pick<ExperimentPlan, 'baselineRate' | 'minimumDetectableEffect' | 'effectKind' | 'baselineSource'>> {
  const seen = await experimentsRepository(db).history(accountId, metric, Date.now() - windowMs, windowMs);
  const measured = seen.exposures >= HISTORY.exposures && seen.outcomes >= HISTORY.outcomes;
  const baselineRate = measured ? seen.outcomes / seen.exposures : (input.baselineRate ?? 0.04);
  const given = input.minimumDetectableEffect;
  return {
    baselineRate,
    minimumDetectableEffect: Math.min(given ?? baselineRate * DESIGN.relativeLift, 0.99 - baselineRate),
    effectKind: given === undefined ? 'relative' : 'absolute',
    baselineSource: measured ? { kind: 'measured', outcomes: seen.outcomes, exposures: seen.exposures } : { kind: 'assumed' },
  };
}

/**
 * Proposes an experiment: its kind checks and plans it (an ad or a post: the kind's own `propose`); a kind that mails
 * contacts plans its sample (power.ts), picks its audience, and files its card here. Refused (a string back, nothing
 * written) when too few contacts could join for the plan's minimum, or a text quotes private notes.
 */
export async function proposeExperiment(db: Db, by: Proposer, input: ProposeExperiment): Promise<{ id: string; cardId: string } | string> {
  const kind = kindOf(input.thing);
  if (kind.reaches !== 'contacts') return kind.propose(db, by, input);
  return proposeMailExperiment(db, by, kind, input);
}

/** A proposal of a kind that mails contacts: its variants checked by the kind, its plan, audience and card. */
async function proposeMailExperiment(
  db: Db,
  by: Proposer,
  kind: ContactKind,
  input: ProposeExperiment,
): Promise<{ id: string; cardId: string } | string> {
  const checked = kind.variants(input);
  if (typeof checked === 'string') return checked;
  const { values } = checked;
  if (new Set(values.map((v) => v.toLowerCase())).size !== values.length)
    return 'the variants must differ from each other and from the draft';
  const texts = [input.draft.body, ...(checked.texts ?? [])];
  const quotes = await privateTextIn(db, by.accountId, [...values, ...texts]);
  if (quotes) return `the experiment ${quotes}, so nothing was proposed; write it in your own words`;
  const id = newId('exp');
  const metric = input.metric ?? 'reply_rate';
  // Clicks and conversions are visits through the mail's tracked links: a mail without a link has none to count.
  if ((metric === 'click_rate' || metric === 'conversion_rate') && !/https?:\/\/\S+/.test(texts.join('\n'))) {
    return `a ${METRICS[metric].rate} needs a link in the mail, and the draft has none`;
  }
  const variants = values.map((value, i) => ({ key: VARIANT_KEYS[i]!, description: checked.describe?.(value) ?? `"${value}"`, value }));
  const words = thingWords(input.thing, input.draft);
  const audienceWords = 'contacts with an email address who have never been mailed, each in one variant only';
  const window = input.replyWindowMs ?? DEFAULT_OUTCOME_WINDOW_MS;
  const baseline = await planBaseline(db, by.accountId, metric, input, window);
  const plan = planExperiment({
    id,
    hypothesis: input.hypothesis ?? `${words} changes the ${metric.replace(/_/g, ' ')} of mail about ${input.topic}.`,
    subject: `${words} of mail about ${input.topic}`,
    variants,
    metric,
    audience: audienceWords,
    ...baseline,
    outcomeWindowMs: window,
  });
  const audience = await openAudience(db, by.accountId, withRoom(plan.plannedPerVariant, variants.length));
  const needed = withRoom(plan.minimumPerVariant, variants.length);
  if (audience.length < needed) {
    return (
      `only ${audience.length} contacts could join; this plan needs at least ${needed} ` +
      `(${plan.minimumPerVariant} per variant, and room for an uneven split)`
    );
  }
  const reach = Math.floor(audience.length / variants.length);
  const storedPlan = { ...plan, audience: `${audience.length} ${audienceWords}`, variants };
  return fileExperiment(db, by, {
    id,
    thing: input.thing,
    topic: input.topic,
    plan: storedPlan,
    draft: checked.draft ?? input.draft,
    audience,
    title: `Experiment: ${words} for "${input.topic}"`,
    details: { variants, metric, plannedPerVariant: plan.plannedPerVariant },
    prompt: (needs) =>
      `${describePlan(storedPlan, { ...CONTACT_WORDS, reachPerVariant: reach })}${kind.afterPlan ?? ''}` +
      `\n${checked.note ? `${checked.note}\n` : ''}${needs ? startNeedsApproval(kind.work) : START_WITHOUT_APPROVAL}`,
  });
}

/** The mail card of one contact in one experiment: the same id on every try, so a contact is never drafted twice. */
const mailCardId = (e: Experiment, contact: string) =>
  `card_x${createHash('sha256').update(`${e.accountId}\0${e.id}\0${contact}`).digest('hex').slice(0, 24)}`;

/**
 * Drafts up to `limit` contacts' mail, each with its recorded variant (of the variants `only` when given: a wave's
 * share, pacing.ts); blocked or stopped contacts are left out, and in a send-window experiment those whose window is
 * closed at `now` wait for a later pass.
 */
export async function draftExperimentMail(db: Db, e: Experiment, limit: number, now = Date.now(), only?: number[]): Promise<number> {
  const kind = kindOf(e.thing);
  // An ad or a post has no mail: its one piece of work is filed instead.
  if (kind.reaches !== 'contacts') return kind.start(db, e);
  if (limit <= 0) return 0;
  const repo = experimentsRepository(db);
  const open = kind.openVariants?.(e, now);
  const variants = only ? only.filter((i) => !open || open.includes(i)) : open;
  if (variants?.length === 0) return 0;
  let drafted = 0;
  for (const u of await repo.undrafted(e.accountId, e.id, limit, variants)) {
    if (await isBlocked(db, e.accountId, u.contact)) {
      await repo.skip(e.accountId, e.id, u.contact, 'on the block list');
      continue;
    }
    const stopped = await contactStatusPastNew(db, e.accountId, normaliseContact(u.contact));
    if (stopped) {
      await repo.skip(e.accountId, e.id, u.contact, `contact ${stopped}`);
      continue;
    }
    const variant = e.plan.variants[u.variantIndex]!;
    const mail = kind.mail(e, variant);
    await db.transaction(async (trx) => {
      const { card } = await fileWork(trx, {
        accountId: e.accountId,
        turnId: null,
        fromOutside: false,
        work: kind.work,
        id: mailCardId(e, u.contact),
        to: u.contact,
        subject: mail.subject,
        body: mail.body,
        title: `${kind.work === 'sequence' ? 'Sequence' : 'Email'} to ${u.contact}: ${mail.subject}`.slice(0, 200),
        details: { experimentId: e.id, variant: variant.key, ...mail.details, ...(u.leadId ? { leadId: u.leadId } : {}) },
      });
      if (!(await experimentsRepository(trx).drafted(e.accountId, e.id, u.contact, card.id))) throw new Error('drafted twice');
    });
    drafted++;
  }
  return drafted;
}

/** Whether the counts reached the next look: a multiple of `lookEvery` per variant past the last look, or the plan. */
function lookDue(e: Experiment, decision: Decision, ended: boolean): boolean {
  if (ended || decision.plannedReached) return true;
  const smallest = Math.min(...decision.variants.map((v) => v.exposures));
  const last = Math.round((e.looks.at(-1) ?? 0) * e.plan.plannedPerVariant);
  return Math.floor(smallest / e.plan.lookEvery) > Math.floor(last / e.plan.lookEvery);
}

/** The card that reports a decision: the winner proposed as the default, or that nothing won. */
function resultCard(e: Experiment, decision: Decision) {
  const cited = citation(e.plan, decision);
  const base = { id: newId('card'), accountId: e.accountId, kind: 'approval', turnId: null, ...cardShape('approval', 'experiment_result') };
  const figures = decision.variants.map((v) => ({
    key: v.key,
    exposures: v.exposures,
    outcomes: v.outcomes,
    rate: v.rate,
    interval: v.interval,
  }));
  const payload = { experimentId: e.id, thing: e.thing, topic: e.topic, metric: e.plan.metric, figures, citation: cited };
  if (decision.state === 'winner') {
    const w = e.plan.variants[decision.winner.index]!;
    return {
      ...base,
      sourceType: 'experiment_winner',
      title: `Use ${w.key} as ${thingWords(e.thing, e.draft)} for "${e.topic}"`.slice(0, 200),
      summary: cited,
      prompt: `${cited}. Approve to make ${w.description} the default for later mail about ${e.topic}.`,
      payload: { ...payload, winner: w.key, value: w.value },
    };
  }
  return {
    ...base,
    sourceType: 'experiment_no_winner',
    title: `No winner: ${thingWords(e.thing, e.draft)} for "${e.topic}"`.slice(0, 200),
    summary: cited,
    prompt: `${cited}. No variant did better than chance allows, so the experiment stopped and drafts stay as they were.`,
    payload: { ...payload, winner: null },
  };
}

/**
 * Looks at a running experiment: counts the matured exposures; before the first look, replans when the control's rate
 * is far from the plan's baseline (plan.ts replanned); on the plan's schedule checks the sample ratio (a mismatch
 * pauses it and files a review card) and records a look; when the rule decides, or no exposure is left to come, ends
 * it, with the contacts it spared, and files the result card, in one transaction (`exhausted` says no exposure is
 * left to come when the pacing found a short variant with no contact left). An end a person brought about (its mail
 * dismissed, so nothing is pending) declares no winner.
 */
export async function lookAtExperiment(
  db: Db,
  given: Experiment,
  now: number,
  replyWindowMs: number,
  exhausted = false,
): Promise<Decision['state'] | 'paused'> {
  let e = given;
  const kind = kindOf(e.thing);
  const counted = await experimentsRepository(db).counts(e, now - replyWindowMs);
  const { counts, pending, sent } = counted;
  const ended = pending === 0 || exhausted;
  const byPerson = ended && (counted.dismissed ?? 0) > 0;
  const smallest = Math.min(...counts.map((c) => c.exposures));
  if (!e.looks.length && !ended && kind.replans && smallest >= e.plan.minimumPerVariant) {
    const next = replanned(e.plan as ExperimentPlan, counts[0]!);
    // Too few outcomes to judge the baseline by: no look yet (nothing spent); the first look moves a step later, so the
    // pacing drafts the next wave and the control has more by then. At the planned sample the plan grows by that step
    // too (no look has spent anything), or the wait would hold it there for good; the audience's end ends it as ever.
    if (next === 'wait') {
      const step = smallest + e.plan.lookEvery;
      const later = { ...e.plan, minimumPerVariant: step, plannedPerVariant: Math.max(e.plan.plannedPerVariant, step) };
      await experimentsRepository(db).setPlan(e.accountId, e.id, later);
      return 'collecting';
    }
    if (next) {
      const plan = { ...next, variants: e.plan.variants };
      if (!(await experimentsRepository(db).setPlan(e.accountId, e.id, plan))) return 'collecting';
      e = { ...e, plan };
    }
  }
  const decision = decide({ plan: e.plan, counts, earlierLooks: e.looks, ended: ended && !byPerson, stoppedByPerson: byPerson });
  if (!lookDue(e, decision, ended) || (decision.look === null && !ended)) return 'collecting';
  const ratio = ratioCounts(e, counted);
  const check = ratio && Math.min(...ratio) + Math.max(...ratio) > 0 ? sampleRatioCheck(ratio) : null;
  if (check?.mismatch) {
    await db.transaction(async (trx) => {
      if (!(await pausedExperiments(trx).pause(e, { ...decision, state: 'collecting' } as Decision))) return;
      await addCard(trx, mismatchCard(e, check, counted));
    });
    return 'paused';
  }
  const ends = decision.state === 'winner' ? 'decided' : decision.state === 'collecting' ? null : 'no_winner';
  // Contacts the plan would have mailed at most that it never did; an ad's impressions and a post's readers are not mailed.
  const mailed = sent.reduce((n, x) => n + x, 0);
  const spared = ends && kind.reaches === 'contacts' ? sparedContacts(e.plan, mailed) : null;
  await db.transaction(async (trx) => {
    if (!(await experimentsRepository(trx).recordLook(e, decision, now, ends, spared))) return;
    if (!ends) return;
    const base = resultCard(e, decision);
    const card = await addCard(trx, kind.resultCard?.(e, base) ?? base);
    await experimentsRepository(trx).setResultCard(e.accountId, e.id, card.id);
  });
  return decision.state;
}
