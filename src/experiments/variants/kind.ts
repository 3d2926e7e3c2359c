/**
 * What every kind of variant is (docs/decisions/experiments.md, "Each kind of variant in one place"): one module per
 * thing that can vary (variants/<kind>.ts), holding how its variants are proposed, started, mailed or served, counted,
 * checked, reported and adopted; variants/registry.ts lists them, one per `Thing`, and the compiler refuses a thing
 * without its kind. The experiments' service, pass, counts and follow-ups ask the registry, never a `thing`.
 */
import type { Db, Queryable } from '../../db.js';
import type { Metric } from '../../statistics/plan.js';
import type { Counted, Experiment, ExperimentCounts, StoredVariant, Thing } from '../experiment.js';
import type { Proposer } from '../experiment-card.js';
import { experimentRows } from '../experiment-rows.js';

/** An ad experiment's own part of a proposal: its ads (the first is A, the control), and the ad test's budget and duration. */
export interface AdProposal {
  ads: { headline: string; body: string; url?: string }[];
  budgetCap?: unknown;
  currency?: unknown;
  durationDays?: unknown;
}

/** The post a title experiment publishes: its control title, markdown body, and optional excerpt and tags. */
export interface PostProposal {
  title: string;
  markdown: string;
  excerpt?: string;
  tags?: string[];
}

/** A proposal, whatever varies (the propose_experiment tool's arguments, checked by the kind). */
export interface Proposal {
  thing: Thing;
  topic: string;
  /** The mail every variant starts from; the control (A) is its own subject or opening (a sequence wait's: step N's wait). */
  draft: Experiment['draft'];
  /** The challengers' texts (1–3): B, C, D (a sequence wait's: waits in days; none for a send window). */
  challengers: (string | number)[];
  /** A send-window experiment's windows (2–4, "HH:MM–HH:MM"; A is the first) and their time zone (UTC when absent). */
  windows?: string[];
  timeZone?: string;
  hypothesis?: string;
  metric?: Metric;
  baselineRate?: number;
  minimumDetectableEffect?: number;
  /** How long after its mail an outcome counts (the plan states it; EXPERIMENT_REPLY_WINDOW_SECONDS): three days when absent. */
  replyWindowMs?: number;
  /** An ad experiment's ads, budget and duration (thing `ad_variant`; draft and challengers unused). */
  ad?: AdProposal;
  /** A post-title experiment's post (thing `post_title`; challengers are other titles). */
  post?: PostProposal;
}

/** What a kind of variant has whoever it reaches. */
interface KindOfVariant<T extends Thing> {
  thing: T;
  /** What varies, in a sentence: "the subject line". */
  words: string;
  /** The words for what one experiment varies, where its draft names more (a sequence wait: "the wait before follow-up 2"). */
  wordsOf?(draft: { step?: number }): string;
  /** Under whose approval settings the work a started experiment files waits (the propose tool's answer says so). */
  startedWorkWaits: string;
  /**
   * What the sample ratio check reads (ratio-mismatch.ts): each variant's matured exposures (`exposed`), its
   * assignments not lost (`kept`: exposures that come window by window), or nothing (the platform assigns).
   */
  ratio: 'exposed' | 'kept' | null;
  /** Whether the first look may replan on the control's rate (plan.ts replanned). */
  replans: boolean;
  /** How much longer than the reply window a unit's exposure must be old before it counts (a sequence wait: its sequence). */
  judgedAfterMs?(e: Counted): number;
  /** This kind's own counts of its experiments in `list`, written into `out` over the assignments' (experiment-counts.ts). */
  counts?(q: Queryable, accountId: string, list: readonly Counted[], maturedBy: number, out: Map<string, ExperimentCounts>): Promise<void>;
  /** The result card in this kind's words (the card names "the default for later mail" otherwise). */
  resultCard?<C extends { summary: string; prompt: string; payload: Record<string, unknown> }>(e: Experiment, card: C): C;
  /** A person approved the winner `value`: adopted once (a second call changes nothing). */
  adopt(db: Db, e: Experiment, value: string, at: number): Promise<void>;
}

/** A proposal's variants for a kind that mails contacts, checked: their values (the control first) and how the card shows them. */
export interface MailVariants {
  values: string[];
  /** A variant's description on the card; its value quoted when absent. */
  describe?(value: string): string;
  /** The draft as stored, when the kind parsed more of it (a sequence's follow-ups); the proposal's when absent. */
  draft?: Experiment['draft'];
  /** More texts than the draft's body, checked for private notes and links like it. */
  texts?: string[];
  /** A line for the card before its approval line: what each contact gets and when it counts. */
  note?: string;
}

/** One contact's mail of one variant: its text and what its card carries beside it. */
export interface ContactMail {
  subject: string;
  body: string;
  details: Record<string, unknown>;
}

/** A kind whose variants are mail to contacts the experiment picked, assigned by our hash when it starts. */
export interface ContactKind<T extends Thing = Thing> extends KindOfVariant<T> {
  reaches: 'contacts';
  /** The kind of work each contact's mail is, and whose approval settings it waits under. */
  work: 'email' | 'sequence';
  /** A proposal's variants, or why they are refused. */
  variants(input: Proposal): MailVariants | string;
  /** What the experiment's card says of its variants after the plan (a send window's rule), or nothing. */
  afterPlan?: string;
  /** A contact's mail of `variant`. */
  mail(e: Experiment, variant: StoredVariant): ContactMail;
  /** The variants whose mail may be drafted at `now` (a send window's open ones); all when absent. */
  openVariants?(e: Experiment, now: number): number[];
}

/** A kind whose experiment files one piece of work of its own when it starts (an ad test, a post), served by others. */
export interface OwnWorkKind<T extends Thing = Thing> extends KindOfVariant<T> {
  reaches: 'its own work';
  /** Checks and plans a proposal and files its `experiment` card (experiment-card.ts); a string says why it is refused. */
  propose(db: Db, by: Proposer, input: Proposal): Promise<{ id: string; cardId: string } | string>;
  /** Files a running experiment's one piece of work, once; answers how many it filed (0 or 1). */
  start(db: Db, e: Experiment): Promise<number>;
}

export type VariantKind<T extends Thing = Thing> = ContactKind<T> | OwnWorkKind<T>;

/** The registry's type: exactly one kind per thing, keyed by it (a thing without its kind, or a misplaced one, does not compile). */
export type VariantKinds = { readonly [T in Thing]: VariantKind<T> };

/** A proposal's text variants: the control (the draft's own text) and the challengers, trimmed. */
export const textVariants = (control: string, challengers: readonly (string | number)[]): string[] => [
  control.trim(),
  ...challengers.map((c) => String(c).trim()),
];

/**
 * Adopts a winner as the default later work about the topic starts from: the claim of the experiment's `adopted_at` and
 * the default (`stored`: the value as the default keeps it, read in the same transaction) commit together, once.
 */
export async function adoptAsDefault(db: Db, e: Experiment, at: number, stored: (q: Queryable) => Promise<string> | string): Promise<void> {
  await db.transaction(async (trx) => {
    const rows = experimentRows(trx);
    if (!(await rows.claimAdoption(e.accountId, e.id, at))) return;
    await rows.adopt(e.accountId, e.thing, e.topic, await stored(trx), e.id, at);
  });
}
