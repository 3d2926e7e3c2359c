/**
 * Storage of experiments: the rows (experiment-rows.ts) and the counts that read them with the mail, cards, visits,
 * conversions and ad reports they count (experiment-counts.ts), as one repository for the service, the pass and the
 * readers above this area's variant kinds. The kinds (variants/) use the rows alone: the counts ask each of them.
 */
import type { Queryable } from '../db.js';
import type { ExperimentPlan } from '../statistics/plan.js';
import type { Experiment } from './experiment.js';
import { countExperiments, type ExperimentCounts, metricHistory } from './experiment-counts.js';
import { experimentRows } from './experiment-rows.js';

export type { ExperimentCounts, Wave } from './experiment-counts.js';
export type { AudienceMember, Experiment, ExperimentStatus, StoredVariant, Thing } from './experiment.js';
export { THINGS } from './experiment.js';
export { type Row, toExperiment, topicKey, type Undrafted } from './experiment-rows.js';

export function experimentsRepository(q: Queryable) {
  return {
    ...experimentRows(q),

    /**
     * Per variant (in plan order): exposures sent at or before `maturedBy` (a sequence wait's, its whole sequence earlier:
     * judgedAfterMs) and, among them, those with the metric's outcome; `sent`: every exposure, matured or not. `pending`:
     * assignments that may still be exposed or mature (drafted or not, not skipped).
     */
    async counts(e: Experiment, maturedBy: number): Promise<ExperimentCounts> {
      return (await countExperiments(q, e.accountId, [e], maturedBy)).get(e.id)!;
    },

    /** `counts` of several experiments of one account (experiment-counts.ts): `/results` reads up to 20 at once. */
    countsOf: (accountId: string, list: readonly Experiment[], maturedBy: number) => countExperiments(q, accountId, list, maturedBy),

    /** The account's history of `metric` in its experiments (experiment-counts.ts metricHistory): a measured baseline. */
    history: (accountId: string, metric: ExperimentPlan['metric'], maturedBy: number, windowMs?: number) =>
      metricHistory(q, accountId, metric, maturedBy, windowMs),
  };
}
