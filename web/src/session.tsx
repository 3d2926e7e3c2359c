import { createContext, useContext } from 'react';
import { type Session, setCsrfToken } from './api';

export interface SessionState {
  session: Session | null;
  /** A sign-in, an accepted invitation or a sign-out: the new session (or none) for the whole app. */
  setSession: (s: Session | null) => void;
}

export const SessionContext = createContext<SessionState>({ session: null, setSession: () => {} });

export function useSession(): SessionState {
  return useContext(SessionContext);
}

/** The signed-in session; only pages behind the sign-in use it. */
export function useSignedIn(): Session {
  const { session } = useSession();
  if (!session) throw new Error('This page needs a session.');
  return session;
}

export function isOwner(s: Session | null): boolean {
  return s?.person.role === 'owner';
}

export function adopt(s: Session | null): Session | null {
  setCsrfToken(s?.csrfToken ?? null);
  return s;
}
