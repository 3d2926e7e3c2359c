import type { z } from 'zod';
import { int } from '../env-rules.js';

/** The dashboard's work pages' server side: the CSV import of contacts and the review queue's live stream. */
export const dashboardWorkEnv = {
  LEAD_IMPORT_MAX_BYTES: int(32 * 1024 * 1024),
  LEAD_IMPORT_PREVIEW_ROWS: int(20),
  LIVE_STREAMS_PER_SESSION: int(5),
  LIVE_STREAMS_PER_ACCOUNT: int(200),
  LIVE_HEARTBEAT_MS: int(15_000),
  LIVE_BACKLOG_EVENTS: int(1_000),
} satisfies z.ZodRawShape;

export function dashboardWorkConfig(env: z.output<z.ZodObject<typeof dashboardWorkEnv>>) {
  return {
    leadImports: {
      /** The largest CSV `POST /dashboard/api/leads/imports` takes (413 beyond); the operator verb reads any size. */
      maxBytes: env.LEAD_IMPORT_MAX_BYTES,
      /** Rows a preview shows when the request names no `limit` (it may ask for 1 to 100). */
      previewRows: env.LEAD_IMPORT_PREVIEW_ROWS,
    },
    liveUpdates: {
      /** Live review streams one dashboard session may hold open at once (429 with Retry-After beyond). */
      perSession: env.LIVE_STREAMS_PER_SESSION,
      /** Live review streams one account may hold open at once, over every process (429 with Retry-After beyond). */
      perAccount: env.LIVE_STREAMS_PER_ACCOUNT,
      /**
       * A comment line on every open stream this often, so proxies keep it; each one also renews the stream's
       * lease and checks the session.
       */
      heartbeatMs: env.LIVE_HEARTBEAT_MS,
      /** Events kept per account for `Last-Event-ID` catch-up (a Redis stream capped near this length). */
      backlogEvents: env.LIVE_BACKLOG_EVENTS,
    },
  };
}
