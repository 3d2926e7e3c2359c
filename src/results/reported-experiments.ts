/**
 * The scoreboard's `experiments` section. Results reports experiments but does not read them: the reader is handed in
 * by the caller (`readExperiments`, src/experiments/reading.ts, which stands above results), so results knows only
 * the shape it reports. Without a reader the section is empty.
 */
import type { Queryable } from '../db.js';
import type { Metric } from '../statistics/plan.js';
import type { Decision } from '../statistics/stopping.js';

/** An experiment as it reads now: its variants' counts, intervals and the stopping rule's decision. */
export interface ReportedExperiment {
  id: string;
  status: string;
  thing: string;
  topic: string;
  hypothesis: string;
  metric: Metric;
  plannedPerVariant: number;
  minimumPerVariant: number;
  variants: {
    key: string;
    description: string;
    value: string;
    exposures: number;
    outcomes: number;
    rate: number | null;
    interval: [number, number] | null;
    /** Null while the experiment runs or is paused: an interim chance of being best invites the early call. */
    probabilityBest: number | null;
    /** A challenger's difference from the control with its repeated confidence interval; null for the control. */
    difference: {
      estimate: number;
      interval: [number, number];
      relative: { estimate: number; interval: [number, number] } | null;
      level: number;
    } | null;
    /** All of this variant's mail sent so far, matured or not (exposures counts only the matured). */
    sent: number;
  }[];
  decision: {
    state: Decision['state'] | 'proposed' | 'dismissed';
    winner: string | null;
    citation: string | null;
    plannedReached: boolean;
  };
  startedAt: number | null;
  decidedAt: number | null;
  adoptedAt: number | null;
  /**
   * Once a mail experiment ended: contacts of its plan's maximum (planned sample × variants) it never mailed, because
   * it was mailed in waves and stopped at a look. Null while it runs, and for an ad or a post (nobody is mailed).
   */
  spared: number | null;
}

/** The account's experiments read since `since`, counting exposures older than `maturedBy`. */
export type ExperimentsReader = (q: Queryable, accountId: string, since: number, maturedBy: number) => Promise<ReportedExperiment[]>;
