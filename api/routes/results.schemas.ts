import { z } from 'zod';
import { ResultsExperiment } from './results-experiments.schemas.js';
import { ResultsHarness } from './results-harness.schemas.js';

export const ResultsQuery = z.object({
  since: z
    .string()
    .regex(/^\d{1,16}$/, 'must be an integer (epoch milliseconds)')
    .transform(Number)
    .optional()
    // Read from text as digits; an integer in /openapi.json, so typed clients pass a number.
    .meta({
      type: 'integer',
      minimum: 0,
      description: 'Start of the window, epoch milliseconds; clamped to between seven days and one hour ago; default 24 hours ago',
    }),
});

const Shipped = z
  .object({
    total: z.number().int(),
    byPerson: z.number().int(),
    byTrustLadder: z.number().int(),
    bySetting: z.number().int(),
    unattributed: z.number().int(),
  })
  .strict()
  .meta({ id: 'ResultsShipped' });

const count = z.number().int();
/** Attributed conversion value per ISO 4217 currency code, e.g. { "USD": 120.5 }; {} when there was none. */
const values = z.record(z.string().regex(/^[A-Z]{3}$/), z.number()).meta({ id: 'ResultsConversionValue' });
/** What Measurement adds to a channel: scanners counted apart, conversions attributed last touch. */
const measured = { scannerClicks: count, conversions: count, conversionValue: values };
const unknownOr = (s: z.ZodNumber) => s.nullable();

/** What the ad platform reported: counts, and spend in minor units of the test's currency. */
const adNumbers = { impressions: count, clicks: count, spend: count, conversions: count };
/** One ad test that ran during the window, with the platform's numbers in it, per variant and in all. */
const ResultsAdTest = z
  .object({
    testId: z.string(),
    cardId: z.string(),
    title: z.string(),
    currency: z.string().nullable(),
    launchedAt: count,
    endsAt: count,
    ...adNumbers,
    costPerConversion: unknownOr(z.number()),
    variants: z.array(z.object({ variant: z.string().nullable(), ...adNumbers }).strict()),
  })
  .strict()
  .meta({ id: 'ResultsAdTest' });

/** A channel's metrics for one window; null means unknown, never zero. */
const channel = <T extends z.ZodRawShape>(id: string, shape: T) => {
  const m = z.object({ ...shape, shipped: Shipped }).strict();
  return z
    .discriminatedUnion('available', [
      z.object({ available: z.literal(true), data: z.object({ window: m, baseline: m }).strict() }).strict(),
      z.object({ available: z.literal(false), reason: z.string() }).strict(),
    ])
    .meta({ id });
};

export const ResultsResponse = z
  .object({
    results: z
      .object({
        window: z.object({ since: count, until: count, requestedSince: count.nullable(), clamped: z.boolean() }).strict(),
        baseline: z.object({ since: count, until: count }).strict(),
        // Null: unknown (no return path for received mail on this account), never zero.
        email: channel('ResultsEmail', {
          sent: count,
          replies: unknownOr(count),
          positiveReplies: unknownOr(count),
          replyRate: unknownOr(z.number()),
          bounces: unknownOr(count),
          delayed: unknownOr(count),
          unsubscribes: count,
          optOuts: count,
          clicks: count,
          ...measured,
        }),
        ads: channel('ResultsAds', {
          testsLaunched: count,
          spend: unknownOr(z.number()),
          impressions: count,
          clicks: count,
          conversions: count,
          costPerConversion: unknownOr(z.number()),
          budgetChanges: count,
          tests: z.array(ResultsAdTest),
        }),
        seo: channel('ResultsSeo', { postsPublished: count, visits: count, ...measured }),
        social: channel('ResultsSocial', { postsPublished: count, engagements: count, visits: count, ...measured }),
        aeo: channel('ResultsAeo', { postsPublished: count, citations: count, visits: count, ...measured }),
        network: channel('ResultsNetwork', {
          requestsSent: count,
          messagesSent: count,
          replies: count,
          connectionsAccepted: count,
          replyRate: unknownOr(z.number()),
        }),
        harness: ResultsHarness,
        experiments: z.array(ResultsExperiment),
      })
      .strict(),
  })
  .meta({ id: 'ResultsResponse' });
