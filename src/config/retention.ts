import type { z } from 'zod';
import { int } from '../env-rules.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** A retention in days; 0 keeps that kind forever (the pass skips it). */
const days = (fallback: number) => int(fallback, 0);

/**
 * How long each kind of history is kept, and how the maintenance pass deletes it (docs/decisions/retention.md).
 * The retentions of the webhook delivery log, inbound raw bytes and bot visits keep their older names
 * (WEBHOOK_DELIVERY_RETENTION_DAYS, INBOUND_RAW_RETENTION_DAYS, INBOUND_APPLIED_RAW_RETENTION_DAYS,
 * LINK_BOT_VISIT_RETENTION_DAYS) in their own areas' settings.
 */
export const retentionEnv = {
  CHANNEL_EVENT_RETENTION_DAYS: days(90),
  VISIT_RETENTION_DAYS: days(90),
  CONVERSION_RETENTION_DAYS: days(90),
  AUDIT_RETENTION_DAYS: days(365),
  AGENT_STEP_RETENTION_DAYS: days(30),
  AGENT_THREAD_RETENTION_DAYS: days(365),
  FINISHED_CARD_RETENTION_DAYS: days(365),
  MODEL_CALL_RETENTION_DAYS: days(90),
  INBOUND_MESSAGE_RETENTION_DAYS: days(90),
  LEAD_IMPORT_RETENTION_DAYS: days(30),
  // `/results` reads minute rollups up to 14 days back (a 7-day window and its baseline): never fewer days.
  MINUTE_ROLLUP_RETENTION_DAYS: int(15, 15),
  RETENTION_BATCH_ROWS: int(5_000),
  RETENTION_PASS_BATCHES: int(20),
  RETENTION_PASS_SECONDS: int(30),
  RETENTION_LOCK_TIMEOUT_MS: int(500),
} satisfies z.ZodRawShape;

/** 0 days: null, kept forever. */
const ms = (d: number) => (d === 0 ? null : d * DAY_MS);

export function retentionConfig(env: z.output<z.ZodObject<typeof retentionEnv>>) {
  return {
    /** Raw channel events (their counts stay in the hourly rollups `/results` reads). */
    channelEventsMs: ms(env.CHANNEL_EVENT_RETENTION_DAYS),
    /** Raw visits, a person's as well as a bot's (bots' go sooner: LINK_BOT_VISIT_RETENTION_DAYS). */
    visitsMs: ms(env.VISIT_RETENTION_DAYS),
    /** Aggregated conversions, by when they happened and arrived (their values stay in the rollups). */
    conversionsMs: ms(env.CONVERSION_RETENTION_DAYS),
    /** The audit log. */
    auditMs: ms(env.AUDIT_RETENTION_DAYS),
    /** The steps (tool results) of a finished agent turn, after it finished; the turn and its replies stay. */
    agentStepsMs: ms(env.AGENT_STEP_RETENTION_DAYS),
    /** A finished agent turn with its replies (the thread), after it finished. */
    agentThreadMs: ms(env.AGENT_THREAD_RETENTION_DAYS),
    /** A resolved, sent or dismissed review card, after it was finished (GET /review/{id} then answers 404). */
    finishedCardsMs: ms(env.FINISHED_CARD_RETENTION_DAYS),
    /** The per-day model-call counters of each account. */
    modelCallsMs: ms(env.MODEL_CALL_RETENTION_DAYS),
    /** An inbound message's row (envelope and outcome) once processed, after it arrived; its raw bytes go sooner. */
    inboundMessagesMs: ms(env.INBOUND_MESSAGE_RETENTION_DAYS),
    /**
     * A finished CSV import's row (its counts and its lists of refused and duplicate lines), after it finished; the
     * file itself is dropped when the import finishes. The leads and contacts it made stay.
     */
    leadImportsMs: ms(env.LEAD_IMPORT_RETENTION_DAYS),
    /** Minute rollups, by their minute (`/results` reads them at its edges only, at most 14 days back; hours stay). */
    minuteRollupsMs: env.MINUTE_ROLLUP_RETENTION_DAYS * DAY_MS,
    /** Rows one statement deletes at most: each statement is short, and holds its row locks only that long. */
    batchRows: env.RETENTION_BATCH_ROWS,
    /** Statements per kind in one pass at most; the rest waits for the next sweep. */
    passBatches: env.RETENTION_PASS_BATCHES,
    /** One pass stops starting statements after this long. */
    passMs: env.RETENTION_PASS_SECONDS * 1000,
    /** A statement waits this long at most for a lock a writer holds; then that kind waits for the next pass. */
    lockTimeoutMs: env.RETENTION_LOCK_TIMEOUT_MS,
  };
}
