import { invitePerson, withdrawInvitation } from '../../src/people/invitations.service.js';
import { changeRole, listPeople, removePerson } from '../../src/people/people.service.js';
import type { Person } from '../../src/people/people.types.js';
import { defineRoute, type RouteDef } from '../route-def.js';
import { IdParams, InvitationMade, InviteBody, PeopleList, PersonReply, RoleBody } from './people.schemas.js';

const item = (p: Person) => ({ id: p.id, email: p.email, name: p.name, role: p.role, totpEnabled: p.totpEnabled, createdAt: p.createdAt });

/** The account's people and invitations: anyone signed in reads them; owners change them. */
export const peopleRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/dashboard/api/people',
    operationId: 'listPeople',
    summary: "The account's people and open invitations",
    auth: 'session',
    scope: null,
    bucket: 'reads',
    responses: { 200: { description: 'People', schema: PeopleList } },
  }).handle(async (_input, ctx) => {
    const { items, invitations } = await listPeople(ctx.deps.db, ctx.session!.account.id);
    return { body: { items: items.map(item), invitations } };
  }),

  defineRoute({
    method: 'post',
    path: '/dashboard/api/people/invitations',
    operationId: 'invitePerson',
    summary: 'Invites an address with a role; the link is mailed, never answered',
    auth: 'session',
    role: 'owner',
    scope: null,
    bucket: 'writes',
    body: InviteBody,
    errors: [409],
    responses: { 201: { description: 'Invited', schema: InvitationMade } },
  }).handle(async ({ body }, ctx) => {
    const s = ctx.session!;
    const made = await invitePerson(ctx.deps, ctx.actor, {
      accountId: s.account.id,
      email: body.email,
      role: body.role,
      invitedBy: s.person.id,
      inviterName: s.person.name,
    });
    return { status: 201, body: { invitation: made.invitation } };
  }),

  defineRoute({
    method: 'delete',
    path: '/dashboard/api/people/invitations/{id}',
    operationId: 'withdrawInvitation',
    summary: 'Withdraws an open invitation',
    auth: 'session',
    role: 'owner',
    scope: null,
    bucket: 'writes',
    params: IdParams,
    responses: { 204: { description: 'Withdrawn' } },
  }).handle(async ({ params }, ctx) => {
    await withdrawInvitation(ctx.deps.db, ctx.actor, ctx.session!.account.id, params.id);
    return { status: 204 };
  }),

  defineRoute({
    method: 'patch',
    path: '/dashboard/api/people/{id}',
    operationId: 'changePersonRole',
    summary: "Changes a person's role (the last owner stays one)",
    auth: 'session',
    role: 'owner',
    scope: null,
    bucket: 'writes',
    params: IdParams,
    body: RoleBody,
    errors: [409],
    responses: { 200: { description: 'Changed', schema: PersonReply } },
  }).handle(async ({ params, body }, ctx) => {
    const person = await changeRole(ctx.deps, ctx.actor, ctx.session!.account.id, params.id, body.role);
    return { body: { person: item(person) } };
  }),

  defineRoute({
    method: 'delete',
    path: '/dashboard/api/people/{id}',
    operationId: 'removePerson',
    summary: 'Removes a person: their sessions end and their tokens are revoked (the last owner stays)',
    auth: 'session',
    role: 'owner',
    scope: null,
    bucket: 'writes',
    params: IdParams,
    errors: [409],
    responses: { 204: { description: 'Removed' } },
  }).handle(async ({ params }, ctx) => {
    await removePerson(ctx.deps, ctx.actor, ctx.session!.account.id, params.id);
    return { status: 204 };
  }),
];
