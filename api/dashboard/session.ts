import { acceptInvitation, viewInvitation } from '../../src/people/invitations.service.js';
import { requestPasswordReset, resetPassword } from '../../src/people/password-reset.service.js';
import { type SignInResult, signIn } from '../../src/people/people.service.js';
import { beginTotp, confirmTotp, disableTotp } from '../../src/people/totp.service.js';
import type { SignedIn } from '../../src/people/people.types.js';
import { endSession, endSessionOfSecret, endSessionsOf } from '../../src/people/sessions.service.js';
import type { Config } from '../../src/config.js';
import { clearedCookie, deviceCookie, deviceSecret, requestNetwork, sessionCookie, sessionSecret } from '../middleware/session.js';
import { newSecret } from '../../src/people/secrets.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import {
  AcceptBody,
  Empty,
  InvitationView,
  PasswordBody,
  RecoveryCodes,
  ResetBody,
  ResetRequestBody,
  SessionView,
  SignInBody,
  TokenParams,
  TotpConfirmBody,
  TotpSetup,
} from './session.schemas.js';

/** What the page knows of its session: the person, the account, the CSRF token its writes carry. */
export const sessionView = (s: SignedIn) => ({
  person: { id: s.person.id, email: s.person.email, name: s.person.name, role: s.person.role, totpEnabled: s.person.totpEnabled },
  account: s.account,
  csrfToken: s.csrfToken,
});

const signedInReply = (config: Config, r: SignInResult, newDevice?: string) => ({
  status: 200 as const,
  headers: {
    'Set-Cookie': newDevice ? [sessionCookie(config, r.secret), deviceCookie(config, newDevice)] : sessionCookie(config, r.secret),
  },
  body: sessionView(r.signedIn),
});

/** The dashboard's own way in and out: sign-in, sign-out, invitations, password resets, the second factor. */
export const sessionRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/session',
    operationId: 'getSession',
    summary: 'The signed-in person, their account and the CSRF token',
    auth: 'session',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'Signed in', schema: SessionView } },
  }).handle(async (_input, ctx) => ({ body: sessionView(ctx.session!) })),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/session',
    operationId: 'signIn',
    summary: 'Signs in with an address and password (and a code when TOTP is on)',
    auth: 'none',
    scope: null,
    bucket: 'writes',
    body: SignInBody,
    errors: [401, 403, 429],
    responses: { 200: { description: 'Signed in; the session cookie is set', schema: SessionView } },
  }).handle(async ({ body }, ctx) => {
    // A browser without a device cookie gets one: its next sign-in is then known by it (sign-in alerts).
    const device = deviceSecret(ctx.req);
    const newDevice = device ? undefined : newSecret();
    const browser = ctx.req.headers['user-agent'];
    const result = await signIn(ctx.deps, body, requestNetwork(ctx.req), { secret: device ?? newDevice ?? null, browser });
    // The session this browser held before (another person's, or its own) ends: one browser, one session.
    const before = sessionSecret(ctx.req);
    if (before) await endSessionOfSecret(ctx.deps, ctx.deps.db, before);
    return signedInReply(ctx.deps.config, result, newDevice);
  }),

  defineRoute({
    method: 'delete',
    path: '/dashboard/api/session',
    operationId: 'signOut',
    summary: 'Signs this session out',
    auth: 'session',
    scope: null,
    bucket: 'writes',
    responses: { 204: { description: 'Signed out; the cookie is cleared' } },
  }).handle(async (_input, ctx) => {
    await endSession(ctx.deps, ctx.deps.db, ctx.session!);
    return { status: 204, headers: { 'Set-Cookie': clearedCookie(ctx.deps.config) } };
  }),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/session/sign-out-everywhere',
    operationId: 'signOutEverywhere',
    summary: 'Ends every session of the signed-in person, this one included',
    auth: 'session',
    scope: null,
    bucket: 'writes',
    responses: { 204: { description: 'Every session ended; the cookie is cleared' } },
  }).handle(async (_input, ctx) => {
    await endSessionsOf(ctx.deps, ctx.deps.db, { accountId: ctx.session!.account.id, personId: ctx.session!.person.id });
    return { status: 204, headers: { 'Set-Cookie': clearedCookie(ctx.deps.config) } };
  }),

  defineRoute({
    method: 'get',
    path: '/dashboard/api/invitations/{token}',
    operationId: 'getInvitation',
    summary: 'What an invitation link offers',
    auth: 'none',
    scope: null,
    bucket: 'reads',
    params: TokenParams,
    responses: { 200: { description: 'The invitation', schema: InvitationView } },
  }).handle(async ({ params }, ctx) => ({ body: await viewInvitation(ctx.deps.db, params.token) })),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/invitations/{token}/accept',
    operationId: 'acceptInvitation',
    summary: 'Accepts an invitation with a name and password, and signs in',
    auth: 'none',
    scope: null,
    bucket: 'writes',
    params: TokenParams,
    body: AcceptBody,
    errors: [403, 409],
    responses: { 200: { description: 'Signed in; the session cookie is set', schema: SessionView } },
  }).handle(async ({ params, body }, ctx) => {
    const device = deviceSecret(ctx.req);
    const newDevice = device ? undefined : newSecret();
    const result = await acceptInvitation(ctx.deps, params.token, body, 'POST /dashboard/api/invitations/{token}/accept', {
      network: requestNetwork(ctx.req),
      deviceSecret: device ?? newDevice ?? null,
    });
    return signedInReply(ctx.deps.config, result, newDevice);
  }),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/password-resets',
    operationId: 'requestPasswordReset',
    summary: 'Mails a reset link when a person holds the address; the same answer either way',
    auth: 'none',
    scope: null,
    bucket: 'writes',
    body: ResetRequestBody,
    errors: [403, 429],
    responses: { 202: { description: 'Taken', schema: Empty } },
  }).handle(async ({ body }, ctx) => {
    await requestPasswordReset(ctx.deps, body.email, requestNetwork(ctx.req));
    return { status: 202, body: {} };
  }),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/password-resets/{token}',
    operationId: 'resetPassword',
    summary: 'Sets a new password by a reset link; ends every session of the person',
    auth: 'none',
    scope: null,
    bucket: 'writes',
    params: TokenParams,
    body: ResetBody,
    errors: [403],
    responses: { 200: { description: 'The password is set', schema: Empty } },
  }).handle(async ({ params, body }, ctx) => {
    await resetPassword(ctx.deps, params.token, body.password, 'POST /dashboard/api/password-resets/{token}');
    return { body: {} };
  }),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/totp',
    operationId: 'beginTotp',
    summary: 'Starts setting up an authenticator app (pending until a code confirms it)',
    auth: 'session',
    scope: null,
    bucket: 'writes',
    responses: { 200: { description: 'The secret, its otpauth URL and a QR code (SVG)', schema: TotpSetup } },
  }).handle(async (_input, ctx) => ({ body: await beginTotp(ctx.deps, ctx.session!) })),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/totp/confirm',
    operationId: 'confirmTotp',
    summary: 'Turns TOTP on with a code of the pending secret; answers ten recovery codes, once',
    auth: 'session',
    scope: null,
    bucket: 'writes',
    body: TotpConfirmBody,
    responses: { 200: { description: 'On', schema: RecoveryCodes } },
  }).handle(async ({ body }, ctx) => ({ body: { recoveryCodes: await confirmTotp(ctx.deps, ctx.actor, ctx.session!, body.code) } })),

  defineRoute({
    method: 'delete',
    path: '/dashboard/api/totp',
    operationId: 'disableTotp',
    summary: 'Turns TOTP off; the password is asked again',
    auth: 'session',
    scope: null,
    bucket: 'writes',
    body: PasswordBody,
    responses: { 204: { description: 'Off' } },
  }).handle(async ({ body }, ctx) => {
    await disableTotp(ctx.deps, ctx.actor, ctx.session!, body.password);
    return { status: 204 };
  }),
];
