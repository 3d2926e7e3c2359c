import { z } from 'zod';
import { SERIES_WINDOWS, type SeriesWindow } from '../../src/results/report/series.service.js';

const WINDOWS = Object.keys(SERIES_WINDOWS) as [SeriesWindow, ...SeriesWindow[]];

/** `window`: 24h (by the hour), 7d or 30d (by the UTC day); 24h when absent. */
export const SeriesQuery = z
  .object({ window: z.enum(WINDOWS).optional().meta({ description: 'The span: 24h by the hour, 7d or 30d by the UTC day; default 24h' }) })
  .strict();

const SeriesFigure = z
  .object({
    key: z.string(),
    kind: z.enum(['count', 'rate', 'amount']),
    values: z.array(z.number().nullable()).meta({ description: 'One per bucket; null is unknown, never zero' }),
  })
  .strict();

const SeriesChannel = z.discriminatedUnion('available', [
  z.object({ available: z.literal(true), figures: z.array(SeriesFigure) }).strict(),
  z.object({ available: z.literal(false), reason: z.string() }).strict(),
]);

export const SeriesReply = z
  .object({
    window: z.enum(WINDOWS),
    by: z.enum(['hour', 'day']),
    since: z.number().int(),
    until: z.number().int(),
    buckets: z.array(z.number().int()),
    channels: z
      .object({
        email: SeriesChannel,
        ads: SeriesChannel,
        seo: SeriesChannel,
        social: SeriesChannel,
        aeo: SeriesChannel,
        network: SeriesChannel,
      })
      .strict(),
  })
  .strict()
  .meta({ id: 'ResultsSeries' });
