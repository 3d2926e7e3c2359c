import { lazy, Suspense, useCallback, useEffect, useState } from 'react';
import { ApiError, api, type Session } from './api';
import { Shell } from './Shell';
import { AcceptInvitation } from './pages/AcceptInvitation';
import { ForgotPassword } from './pages/ForgotPassword';
import { NotFound } from './pages/NotFound';
import { ResetPassword } from './pages/ResetPassword';
import { SignIn } from './pages/SignIn';
import { Redirect, match, usePath } from './router';
import { adopt, SessionContext } from './session';
import { Approvals } from './settings/Approvals';
import { Mail } from './settings/Mail';
import { People } from './settings/People';
import { Profile } from './settings/Profile';
import { Tokens } from './settings/Tokens';
import { Webhooks } from './settings/Webhooks';
import { Loading } from './ui';

// The work pages load when first opened, so the sign-in screen's script stays small.
const review = () => import('./work/Review');
const agent = () => import('./work/Agent');
const results = () => import('./work/Results');
const workflows = () => import('./work/Workflows');
const Review = lazy(() => review().then((m) => ({ default: m.Review })));
const Agent = lazy(() => agent().then((m) => ({ default: m.Agent })));
const Results = lazy(() => results().then((m) => ({ default: m.Results })));
const Workflows = lazy(() => workflows().then((m) => ({ default: m.Workflows })));
const leads = () => import('./work/Leads');
const leadTools = () => import('./work/LeadImport');
// The page a load opens starts loading at once, beside the session probe, rather than after its answer (the
// desk's first screen was a chain of script, session, page script, queue). A module is loaded once: the lazy
// page above gets the same promise.
const OPENING: Record<string, () => Promise<unknown>> = {
  '/review': review,
  '/agent': agent,
  '/results': results,
  '/workflows': workflows,
};
void OPENING[window.location.pathname.replace(/^\/dashboard/, '').replace(/\/$/, '')]?.();
const Leads = lazy(() => leads().then((m) => ({ default: m.Leads })));
const LeadImport = lazy(() => leadTools().then((m) => ({ default: m.LeadImport })));
const Blocklist = lazy(() => leadTools().then((m) => ({ default: m.Blocklist })));
const LeadPage = lazy(() => import('./work/LeadPage').then((m) => ({ default: m.LeadPage })));

/** The work pages, in the nav's first section; everyone signed in reaches them. */
export const WORK_PAGES = [
  { path: '/review', label: 'Review', owner: false, Page: Review },
  { path: '/agent', label: 'Agent', owner: false, Page: Agent },
  { path: '/leads', label: 'Leads', owner: false, Page: Leads },
  { path: '/results', label: 'Results', owner: false, Page: Results },
  { path: '/workflows', label: 'Workflows', owner: false, Page: Workflows },
] as const;

/** Pages under a nav entry: reached from their page's links, the entry marked current. */
const SUB_PAGES = [
  { path: '/leads/import', under: '/leads', Page: LeadImport },
  { path: '/leads/blocklist', under: '/leads', Page: Blocklist },
] as const;

/** Pages a signed-in person reaches, with the nav's wording; `owner` pages are not offered to a member. */
export const SETTINGS_PAGES = [
  { path: '/settings/profile', label: 'Profile & security', owner: false, Page: Profile },
  { path: '/settings/tokens', label: 'API tokens', owner: false, Page: Tokens },
  { path: '/settings/webhooks', label: 'Webhooks', owner: true, Page: Webhooks },
  { path: '/settings/people', label: 'People', owner: false, Page: People },
  { path: '/settings/mail', label: 'Mail', owner: false, Page: Mail },
  { path: '/settings/approvals', label: 'Approvals', owner: false, Page: Approvals },
] as const;

export function App() {
  const [session, setState] = useState<Session | null | undefined>(undefined);
  const [loadError, setLoadError] = useState<string | null>(null);
  const setSession = useCallback((s: Session | null) => setState(adopt(s)), []);
  const path = usePath();

  useEffect(() => {
    api<Session>('GET', '/session').then(
      (s) => setSession(s),
      (err: unknown) => {
        if (err instanceof ApiError && err.status === 401) setSession(null);
        else setLoadError(err instanceof Error ? err.message : String(err));
      },
    );
  }, [setSession]);

  if (loadError) {
    return (
      <main className="center-page">
        <p className="form-error" role="alert">
          {loadError}
        </p>
      </main>
    );
  }
  if (session === undefined) {
    return (
      <main className="center-page">
        <Loading />
      </main>
    );
  }
  return <SessionContext.Provider value={{ session, setSession }}>{route(path, session)}</SessionContext.Provider>;
}

function route(path: string, session: Session | null) {
  let params: Record<string, string> | null;
  // The mailed links: /reset/:token and /invite/:token, and the same under the API's nouns (the links the
  // server builds may use either).
  if ((params = match('/reset/:token', path) ?? match('/password-resets/:token', path))) return <ResetPassword token={params.token!} />;
  if ((params = match('/invite/:token', path) ?? match('/invitations/:token', path))) return <AcceptInvitation token={params.token!} />;
  if (path === '/forgot') return <ForgotPassword />;
  if (path === '/sign-in') return session ? <Redirect to="/settings/profile" /> : <SignIn />;
  if (!session) return <Redirect to="/sign-in" />;
  if (path === '/' || path === '/settings') return <Redirect to="/settings/profile" />;
  const page = [...WORK_PAGES, ...SETTINGS_PAGES].find((p) => p.path === path);
  const sub = SUB_PAGES.find((p) => p.path === path);
  const lead = sub ? null : match('/leads/:id', path);
  const owner = session.person.role === 'owner';
  let body = <NotFound />;
  if (page && (owner || !page.owner)) body = <page.Page />;
  else if (sub) body = <sub.Page />;
  else if (lead) body = <LeadPage key={lead.id} id={lead.id!} />;
  return (
    <Shell work={WORK_PAGES} pages={SETTINGS_PAGES.filter((p) => owner || !p.owner)} current={sub?.under ?? (lead ? '/leads' : path)}>
      <Suspense fallback={<Loading />}>{body}</Suspense>
    </Shell>
  );
}
