import type { z } from 'zod';
import { int } from '../env-rules.js';

/** The dashboard's sign-in, sessions and single-use links (docs/dashboard.md). */
export const dashboardEnv = {
  DASHBOARD_SESSION_IDLE_MS: int(12 * 60 * 60 * 1000, 60_000),
  DASHBOARD_SESSION_MAX_MS: int(14 * 24 * 60 * 60 * 1000, 60_000),
  DASHBOARD_PASSWORD_MEMORY_KIB: int(47_104, 8_192),
  DASHBOARD_PASSWORD_TIME_COST: int(1, 1),
  DASHBOARD_SIGNIN_ADDRESS_FAILURES: int(5),
  DASHBOARD_SIGNIN_NETWORK_FAILURES: int(50),
  DASHBOARD_SIGNIN_WINDOW_SECONDS: int(15 * 60),
  DASHBOARD_INVITATION_TTL_HOURS: int(7 * 24),
  DASHBOARD_RESET_TTL_MINUTES: int(60),
} satisfies z.ZodRawShape;

export function dashboardConfig(env: z.output<z.ZodObject<typeof dashboardEnv>>) {
  return {
    /** A session unused this long is over (DASHBOARD_SESSION_IDLE_MS). */
    sessionIdleMs: env.DASHBOARD_SESSION_IDLE_MS,
    /** A session is over this long after sign-in, however busy (DASHBOARD_SESSION_MAX_MS). */
    sessionMaxMs: env.DASHBOARD_SESSION_MAX_MS,
    /** argon2id's cost for passwords: memory in KiB and passes (one lane); see docs/dashboard.md, "Passwords". */
    password: { memoryKib: env.DASHBOARD_PASSWORD_MEMORY_KIB, timeCost: env.DASHBOARD_PASSWORD_TIME_COST },
    /**
     * Failed sign-ins allowed per address and per client network (an IPv4 address, an IPv6 /64) within the
     * window; past either, sign-in answers 429 with Retry-After until the window ends.
     */
    signIn: {
      addressFailures: env.DASHBOARD_SIGNIN_ADDRESS_FAILURES,
      networkFailures: env.DASHBOARD_SIGNIN_NETWORK_FAILURES,
      windowSeconds: env.DASHBOARD_SIGNIN_WINDOW_SECONDS,
    },
    /** How long an invitation link stays good. */
    invitationTtlMs: env.DASHBOARD_INVITATION_TTL_HOURS * 60 * 60 * 1000,
    /** How long a password-reset link stays good. */
    resetTtlMs: env.DASHBOARD_RESET_TTL_MINUTES * 60 * 1000,
  };
}

export type DashboardConfig = ReturnType<typeof dashboardConfig>;
