import { z } from 'zod';

/** The path's token: anything; only a live hook's token matches, everything else is the same 404. */
export const HookTokenParams = z.object({ hookToken: z.string() });

export const WebhookAccepted = z
  .object({
    accepted: z.literal(true),
    deliveryId: z.string().describe("The delivery as it appears in the hook's delivery log"),
  })
  .meta({ id: 'WebhookAccepted' });
