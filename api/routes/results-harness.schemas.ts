import { z } from 'zod';

const count = z.number().int().min(0);

/** The agent's own work in one window (docs/decisions/content-and-measurement.md, "/results harness", says what each counts). */
const HarnessMetrics = z
  .object({
    turns: count,
    cardsCreated: count,
    approvedByPerson: count,
    autoResolvedByTrustLadder: count,
    resolvedBySetting: count,
    dismissed: count,
    workflowRunsSucceeded: count,
    workflowRunsFailed: count,
  })
  .strict()
  .meta({ id: 'ResultsHarnessMetrics' });

/** `/results` `harness`: always available (every account has an agent); zeros when nothing happened. */
export const ResultsHarness = z
  .object({
    available: z.literal(true),
    data: z.object({ window: HarnessMetrics, baseline: HarnessMetrics }).strict(),
  })
  .strict()
  .meta({ id: 'ResultsHarness' });
