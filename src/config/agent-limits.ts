import type { z } from 'zod';

/** Limits on what inbound events may cost the agent (wakes, model calls). */
export const agentLimitsEnv = {} satisfies z.ZodRawShape;

export function agentLimitsConfig(_env: object) {
  return {};
}
