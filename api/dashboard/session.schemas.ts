import { z } from 'zod';
import { ROLES } from '../../src/people/people.types.js';

const Text = (max: number) => z.string().max(max, `must be at most ${max} characters`);

export const PersonView = z
  .object({ id: z.string(), email: z.string(), name: z.string(), role: z.enum(ROLES), totpEnabled: z.boolean() })
  .strict();

/** `GET /dashboard/api/session`, and the answer of every way in (sign-in, invitation accepted). */
export const SessionView = z
  .object({ person: PersonView, account: z.object({ id: z.string(), name: z.string() }).strict(), csrfToken: z.string() })
  .strict();

export const SignInBody = z.object({ email: Text(320), password: Text(1024), code: Text(64).optional() }).strict();

export const TokenParams = z.object({ token: Text(100) }).strict();

export const InvitationView = z.object({ email: z.string(), accountName: z.string(), role: z.enum(ROLES) }).strict();

export const AcceptBody = z.object({ name: Text(200), password: Text(1024) }).strict();

export const ResetRequestBody = z.object({ email: Text(320) }).strict();

export const ResetBody = z.object({ password: Text(1024) }).strict();

export const Empty = z.object({}).strict();

export const TotpSetup = z.object({ secret: z.string(), otpauthUrl: z.string(), qrSvg: z.string() }).strict();

export const TotpConfirmBody = z.object({ code: Text(64) }).strict();

export const RecoveryCodes = z.object({ recoveryCodes: z.array(z.string()).length(10) }).strict();

export const PasswordBody = z.object({ password: Text(1024) }).strict();
