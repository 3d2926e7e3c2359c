import { z } from 'zod';
import { THINGS } from '../../src/experiments/experiments.repository.js';
import { METRICS } from '../../src/statistics/plan.js';

const count = z.number().int().min(0);
const share = z.number().min(0).max(1);
const at = count.nullable();

/**
 * One variant's figures; exposures are the matured ones (sent longer ago than the reply window; a sequence wait's, than
 * its whole sequence too), `sent` all of them.
 */
const ResultsExperimentVariant = z
  .object({
    key: z.string(),
    description: z.string(),
    exposures: count,
    outcomes: count,
    rate: share.nullable(),
    interval: z.tuple([share, share]).nullable().meta({ description: '95% Wilson score interval of the rate; null with no exposures' }),
    probabilityBest: share.nullable().meta({
      description:
        'chance this variant is best (uniform prior), once the experiment has ended; ' +
        'null while it runs or is paused, when no figure may invite an early call',
    }),
    difference: z
      .object({
        estimate: z.number(),
        interval: z.tuple([z.number(), z.number()]),
        relative: z
          .object({ estimate: z.number(), interval: z.tuple([z.number(), z.number()]) })
          .strict()
          .nullable(),
        level: share,
      })
      .strict()
      .nullable()
      .meta({
        description:
          "a challenger's difference from the control (rate points, and relative) with its repeated confidence interval, " +
          'valid at whatever look the experiment ends on; null for the control and before any exposure',
      }),
    sent: count,
  })
  .strict()
  .meta({ id: 'ResultsExperimentVariant' });

/**
 * `/results` `experiments`: running and proposed experiments and those that ended since the baseline began, newest
 * first, at most 20 (docs/decisions/experiments.md, "/results experiments").
 */
export const ResultsExperiment = z
  .object({
    id: z.string(),
    status: z.enum(['proposed', 'running', 'paused', 'decided', 'no_winner', 'dismissed']),
    thing: z.enum(THINGS),
    topic: z.string(),
    hypothesis: z.string(),
    metric: z.enum(Object.keys(METRICS) as [keyof typeof METRICS, ...(keyof typeof METRICS)[]]),
    plannedPerVariant: count,
    minimumPerVariant: count,
    variants: z.array(ResultsExperimentVariant),
    decision: z
      .object({
        state: z.enum(['collecting', 'winner', 'no_difference', 'stopped', 'proposed', 'dismissed']),
        winner: z.string().nullable(),
        citation: z.string().nullable(),
        plannedReached: z.boolean(),
      })
      .strict(),
    startedAt: at,
    decidedAt: at,
    adoptedAt: at,
    spared: count.nullable().meta({
      description:
        "once a mail experiment ended: contacts of its plan's maximum (planned sample per variant × variants) it never " +
        'mailed; null while running, and for an ad or a post',
    }),
  })
  .strict()
  .meta({ id: 'ResultsExperiment' });
