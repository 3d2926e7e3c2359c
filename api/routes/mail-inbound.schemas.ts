import { z } from 'zod';

/** The path's secret: anything; only an account's current inbound secret matches, everything else is 404. */
export const InboundSecretParams = z.object({ secret: z.string() });

export const InboundAccepted = z
  .object({
    id: z.string().describe('The stored message (`mail inbound-list` shows it)'),
    status: z.literal('received').describe('Stored whole; parsing and matching follow in the background'),
  })
  .meta({ id: 'InboundAccepted' });
