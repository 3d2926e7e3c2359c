import { z } from 'zod';
import { NOT_BLANK } from '../schemas.js';

/** `text`: the schedule in plain words, as a workflow's `scheduleText` takes it. */
export const SchedulePreviewQuery = z.object({ text: z.string().trim().min(1).max(200).meta(NOT_BLANK) }).strict();

export const SchedulePreviewReply = z
  .object({
    echo: z.string().nullable(),
    error: z.string().nullable(),
    timeZone: z.string(),
    nextRuns: z.array(z.number().int()),
  })
  .meta({ id: 'SchedulePreview' });
