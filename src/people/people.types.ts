/** A person's role in their account: owners do everything, members everything but people, hooks, mail and approval settings. */
export const ROLES = ['owner', 'member'] as const;
export type Role = (typeof ROLES)[number];

/** A person as the dashboard shows them. */
export interface Person {
  id: string;
  accountId: string;
  email: string;
  name: string;
  role: Role;
  totpEnabled: boolean;
  createdAt: number;
}

/** A signed-in request's session: who, in which account, and the CSRF token its writes must carry. */
export interface SignedIn {
  sessionId: string;
  csrfToken: string;
  person: Person;
  account: { id: string; name: string };
}

/** An invitation as an owner sees it (its link is mailed, never shown). */
export interface Invitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: number;
}

/** The sign-in address as stored: trimmed and lower-cased. */
export const normaliseEmail = (email: string): string => email.trim().toLowerCase();
