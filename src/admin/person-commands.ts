import { adminActor } from '../audit/audit.service.js';
import { BadRequest } from '../errors.js';
import { invitePerson } from '../people/invitations.service.js';
import { ROLES, type Role } from '../people/people.types.js';
import type { Verb } from './verb.js';

/**
 * The dashboard's people. `person invite --account ID --email E --role owner|member`: an invitation and its
 * one-time link, printed here (the way an operator lets an account's first owner in: nobody is there yet to
 * invite them); no mail is sent. Audited as the operator.
 */
export const PERSON_VERBS: Record<string, Verb> = {
  'person invite': {
    flags: ['account', 'email', 'role'],
    async run(f, { db, config }) {
      if (!(ROLES as readonly string[]).includes(f.role!)) throw new BadRequest(`--role must be ${ROLES.join(' or ')}`);
      const made = await invitePerson({ db, config }, adminActor(f.account!, 'person invite'), {
        accountId: f.account!,
        email: f.email!,
        role: f.role as Role,
        invitedBy: null,
      });
      return { invitation: made.invitation, link: made.link };
    },
  },
};
