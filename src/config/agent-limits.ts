import type { z } from 'zod';
import { int } from '../env-rules.js';

/** Limits on what inbound events may cost the agent (wakes, model calls). */
export const agentLimitsEnv = {
  AGENT_REPLY_WAKES_PER_LEAD_PER_HOUR: int(3),
  AGENT_REPLY_WAKES_PER_ACCOUNT_PER_HOUR: int(60),
  AGENT_MODEL_CALLS_PER_DAY: int(500),
} satisfies z.ZodRawShape;

export function agentLimitsConfig(env: z.output<z.ZodObject<typeof agentLimitsEnv>>) {
  return {
    /**
     * Wakes that replies (mail or network) start for one lead, and for one account, in any rolling hour;
     * a wake past either is not dropped but scheduled for when the hour allows it.
     */
    replyWakesPerLeadPerHour: env.AGENT_REPLY_WAKES_PER_LEAD_PER_HOUR,
    replyWakesPerAccountPerHour: env.AGENT_REPLY_WAKES_PER_ACCOUNT_PER_HOUR,
    /** Language-model calls (turn rounds of the `llm` brain) one account may make per UTC day. */
    modelCallsPerDay: env.AGENT_MODEL_CALLS_PER_DAY,
  };
}
