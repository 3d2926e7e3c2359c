import { z } from 'zod';
import { ROLES } from '../../src/people/people.types.js';

export const PersonItem = z
  .object({
    id: z.string(),
    email: z.string(),
    name: z.string(),
    role: z.enum(ROLES),
    totpEnabled: z.boolean(),
    createdAt: z.number().int(),
  })
  .strict();

export const InvitationItem = z.object({ id: z.string(), email: z.string(), role: z.enum(ROLES), expiresAt: z.number().int() }).strict();

export const PeopleList = z.object({ items: z.array(PersonItem), invitations: z.array(InvitationItem) }).strict();

export const InviteBody = z
  .object({ email: z.string().max(320, 'must be at most 320 characters'), role: z.enum(ROLES, 'must be owner or member') })
  .strict();

export const InvitationMade = z.object({ invitation: InvitationItem }).strict();

export const IdParams = z.object({ id: z.string().max(100, 'must be at most 100 characters') }).strict();

export const RoleBody = z.object({ role: z.enum(ROLES, 'must be owner or member') }).strict();

export const PersonReply = z.object({ person: PersonItem }).strict();
