import type { z } from 'zod';
import { int } from '../env-rules.js';

/** Limits of the public tracked-link door (/l/{code}) and the one-click unsubscribe door (/u/{token}). */
export const linksEnv = {
  LINK_REPEAT_WINDOW_SECONDS: int(30 * 60, 0),
  LINK_CLIENT_VISITS_PER_HOUR: int(100),
  LINK_CODE_VISITS_PER_HOUR: int(2_000),
  LINK_BOT_VISIT_RETENTION_DAYS: int(7),
  UNSUBSCRIBE_CLIENT_PER_MINUTE: int(300),
} satisfies z.ZodRawShape;

export function linksConfig(env: z.output<z.ZodObject<typeof linksEnv>>) {
  return {
    /**
     * A click through one link from the same browser (User-Agent) at the same client address within this
     * long counts once and answers the first visit's `gvid`; 0: every click counts.
     */
    repeatWindowMs: env.LINK_REPEAT_WINDOW_SECONDS * 1000,
    /** Visits counted per account from one client network in an hour; past it the redirect still answers, uncounted. */
    clientVisitsPerHour: env.LINK_CLIENT_VISITS_PER_HOUR,
    /** Visits counted per link in an hour, from every client together; past it the redirect still answers, uncounted. */
    codeVisitsPerHour: env.LINK_CODE_VISITS_PER_HOUR,
    /** How long a bot's or link scanner's visit row is kept (its `scanner_click` count stays). */
    botVisitRetentionMs: env.LINK_BOT_VISIT_RETENTION_DAYS * 24 * 60 * 60 * 1000,
    /** Requests to /u/{token} one client network may make in a minute; past it a 429 page with Retry-After. */
    unsubscribeClientPerMinute: env.UNSUBSCRIBE_CLIENT_PER_MINUTE,
  };
}
