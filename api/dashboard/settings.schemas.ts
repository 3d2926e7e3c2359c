import { z } from 'zod';
import { APPROVAL_MODES, KINDS_OF_WORK } from '../../src/review/approval.service.js';

// Settings, Mail and Approvals. The From rule is the sending identity's (src/mail/sender-identity.ts) and
// spending's rule the approval service's, so the bodies take strings and enums and the services say the rest.

export const MailSettingsReply = z
  .object({
    from: z.string(),
    dkim: z
      .object({
        domain: z.string(),
        selector: z.string().nullable(),
        name: z.string().nullable(),
        value: z.string().nullable(),
        record: z.string().nullable().meta({ description: 'The DNS TXT record to publish (a zone-file line); null while no key exists' }),
      })
      .strict(),
    inboundAddress: z.string(),
  })
  .strict();

export const MailSettingsBody = z
  .object({ from: z.string().meta({ description: '"Name <user@example.com>" or user@example.com, at a domain the operator allowed' }) })
  .strict();

export const ApprovalItem = z
  .object({
    kind: z.enum(KINDS_OF_WORK),
    mode: z.enum(APPROVAL_MODES),
    ladder: z
      .object({
        state: z.enum(['off', 'climbing', 'trusted']),
        words: z.string(),
        approvedUnchanged: z.number().int(),
        threshold: z.number().int(),
      })
      .strict(),
  })
  .strict();

export const ApprovalsList = z.object({ items: z.array(ApprovalItem) }).strict();
export const ApprovalReply = z.object({ item: ApprovalItem }).strict();
export const KindParams = z.object({ kind: z.enum(KINDS_OF_WORK) });
export const ApprovalBody = z.object({ mode: z.enum(APPROVAL_MODES) }).strict();
