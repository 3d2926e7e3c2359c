/**
 * What an experiment is, as every part of this area reads it (docs/decisions/experiments.md): what varies (`THINGS`,
 * one kind of variant each: variants/registry.ts), its status, plan, variants, draft and audience. Types only; the rows
 * are experiment-rows.ts'.
 */
import type { ExperimentPlan, Metric, VariantCounts } from '../statistics/plan.js';
import type { Decision } from '../statistics/stopping.js';

/** One follow-up of the sequence a `sequence_wait` experiment starts from (the `steps[]` of a `sequence` card). */
export interface WaitStep {
  subject?: string | undefined;
  body: string;
  delayDays: number;
}

/** What a `sequence_wait` experiment's draft carries beside its first mail: the follow-ups, and N (1-based). */
export interface SequenceParts {
  steps: WaitStep[];
  step: number;
}

/** What varies in an experiment: a mail's subject or opening, a sequence step's wait, the time mail is sent, an ad, a post's title. */
export const THINGS = ['mail_subject', 'mail_opening', 'sequence_wait', 'send_window', 'ad_variant', 'post_title'] as const;
export type Thing = (typeof THINGS)[number];

/** `paused`: the sample ratio check found a mismatch; it declares nothing until a person resumes or ends it. */
export type ExperimentStatus = 'proposed' | 'running' | 'paused' | 'decided' | 'no_winner' | 'dismissed';

/** A variant as stored: the plan's key and words, and the text that ships. */
export interface StoredVariant {
  key: string;
  description: string;
  value: string;
}

export interface AudienceMember {
  leadId: string | null;
  email: string;
}

export interface Experiment {
  accountId: string;
  id: string;
  cardId: string | null;
  status: ExperimentStatus;
  thing: Thing;
  topic: string;
  plan: Omit<ExperimentPlan, 'variants'> & { variants: StoredVariant[] };
  draft: { subject: string; body: string } & Partial<SequenceParts> & {
      /** The counts the ratio check was last resumed at (a person's resume): later checks read what came after. */
      ratioFrom?: number[];
    };
  audience: AudienceMember[];
  looks: number[];
  decision: Decision | null;
  winnerKey: string | null;
  resultCardId: string | null;
  createdAt: number;
  startedAt: number | null;
  decidedAt: number | null;
  adoptedAt: number | null;
  /** Once ended: contacts of the plan's maximum it never mailed (waves.ts sparedContacts); null before, or with no contacts. */
  spared: number | null;
}

/** What the counts read of an experiment. */
export interface Counted {
  id: string;
  thing: Thing;
  draft: Partial<SequenceParts>;
  plan: { metric: Metric; variants: readonly { value: string }[]; plannedPerVariant?: number; outcomeWindowMs?: number };
}

/** An experiment's counts now: matured exposures and outcomes, all mail sent (per variant), and assignments still to come. */
export interface ExperimentCounts {
  counts: VariantCounts[];
  sent: number[];
  pending: number;
  /**
   * Per variant, assignments that will never be exposed: mail dismissed unsent, or left out (blocked, refused, sent
   * outside its window). The ratio check reads what is left (kept) where exposures come at each variant's own pace.
   */
  lost?: number[];
  /** Assignments whose mail a person dismissed unsent: an end they bring about is a person's stop. */
  dismissed?: number;
  /** Per variant, every assignment (the planned split's draw). */
  assigned?: number[];
}
