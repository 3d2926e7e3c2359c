import { type ReactNode, useEffect, useState } from 'react';
import { api } from './api';
import { Link, navigate } from './router';
import { useSession, useSignedIn } from './session';

interface NavPage {
  path: string;
  label: string;
}

/** The signed-in frame: the left nav on a desktop, a top bar with a menu button on a phone's width. */
export function Shell({
  work,
  pages,
  current,
  children,
}: {
  work: readonly NavPage[];
  pages: readonly NavPage[];
  current: string;
  children: ReactNode;
}) {
  const session = useSignedIn();
  const { setSession } = useSession();
  const [open, setOpen] = useState(false);
  const [signOutError, setSignOutError] = useState<string | null>(null);

  // The menu closes when the page changes, and on Escape.
  // biome-ignore lint/correctness/useExhaustiveDependencies: closes on every change of page
  useEffect(() => setOpen(false), [current]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') setOpen(false);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open]);

  const signOut = async () => {
    try {
      await api('DELETE', '/session');
      setSession(null);
      navigate('/sign-in');
    } catch (err) {
      setSignOutError(err instanceof Error ? err.message : String(err));
    }
  };

  return (
    <div className="shell">
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">Growth Agent</span>
        <button
          type="button"
          className="button secondary menu-button"
          aria-expanded={open}
          aria-controls="nav"
          onClick={() => setOpen((o) => !o)}
        >
          Menu
        </button>
      </header>
      <nav id="nav" className={open ? 'sidenav open' : 'sidenav'} aria-label="Dashboard">
        <div className="brand sidenav-brand">Growth Agent</div>
        <p className="account-name">{session.account.name}</p>
        <p className="nav-heading" id="nav-work">
          Work
        </p>
        <ul aria-labelledby="nav-work" className="nav-section">
          {work.map((p) => (
            <li key={p.path}>
              <Link to={p.path} aria-current={p.path === current ? 'page' : undefined}>
                {p.label}
              </Link>
            </li>
          ))}
        </ul>
        <p className="nav-heading" id="nav-settings">
          Settings
        </p>
        <ul aria-labelledby="nav-settings">
          {pages.map((p) => (
            <li key={p.path}>
              <Link to={p.path} aria-current={p.path === current ? 'page' : undefined}>
                {p.label}
              </Link>
            </li>
          ))}
        </ul>
        <div className="nav-footer">
          <p className="who">
            {session.person.name}
            <span className="muted"> · {session.person.role === 'owner' ? 'Owner' : 'Member'}</span>
          </p>
          <button type="button" className="button secondary" onClick={signOut}>
            Sign out
          </button>
          {signOutError ? (
            <p className="form-error" role="alert">
              {signOutError}
            </p>
          ) : null}
        </div>
      </nav>
      <main id="main" className="content">
        {children}
      </main>
    </div>
  );
}
