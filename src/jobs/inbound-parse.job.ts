import { z } from 'zod';
import { defineJob } from './registry.js';

/**
 * Parses, matches, classifies and applies one stored inbound message. Settling is a conditional update
 * of a `received` row, so a second run changes nothing; tries are counted on the row and capped (a
 * message that keeps failing ends `malformed`, src/inbound/intake.service.ts).
 */
export const inboundParse = defineJob({
  queue: 'inbound-mail',
  name: 'inbound.parse',
  payload: z.object({ id: z.string().min(1) }),
  options: { attempts: 5, backoff: { type: 'exponential', delay: 2_000, jitter: 0.2 } },
  description: 'Parses and applies one received message; only a still-received row is settled, so repeats are harmless.',
  // One live job per stored message.
  jobId: (p) => `inbound-parse-${p.id}`,
});
