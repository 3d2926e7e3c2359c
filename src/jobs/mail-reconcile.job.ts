import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Settles one fenced mail send whose provider answer was lost: lookup by idempotency key, resend under
 * the same key where the transport dedupes, or (past the window) hand it to a person. Never a blind resend.
 */
export const mailReconcile = defineJob({
  queue: 'mail-sends',
  name: 'mail.reconcile',
  payload: z.object({ accountId: z.string().min(1), sendId: z.string().min(1) }),
  options: {
    attempts: 12,
    backoff: { type: 'exponential', delay: 5_000, jitter: 0.2 },
  },
  description: 'Settles a mail send whose answer was lost (lookup, keyed resend, or a card for a person); a settled send is a no-op.',
  // One job per reconciliation attempt of the send.
  jobId: (p, r: { attempt: number }) => `mail-reconcile-${p.sendId}-${r.attempt}`,
});
