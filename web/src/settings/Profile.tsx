import { type FormEvent, useState } from 'react';
import { api, type Session } from '../api';
import { navigate } from '../router';
import { useSession, useSignedIn } from '../session';
import { CopyField, Field, FormError, Notice, PageHeader, useAction } from '../ui';

interface TotpSetup {
  secret: string;
  otpauthUrl: string;
  qrSvg: string;
}

/** Settings → Profile & security: who you are, two-step sign-in (TOTP) and signing out. */
export function Profile() {
  const session = useSignedIn();
  const { setSession } = useSession();
  const everywhere = useAction();

  const signOutEverywhere = () =>
    everywhere.run(async () => {
      await api('POST', '/session/sign-out-everywhere');
      setSession(null);
      navigate('/sign-in');
    });

  return (
    <section>
      <PageHeader title="Profile & security" />
      <div className="card">
        <h2>You</h2>
        <dl className="facts">
          <dt>Name</dt>
          <dd>{session.person.name}</dd>
          <dt>Email</dt>
          <dd>{session.person.email}</dd>
          <dt>Role</dt>
          <dd>{session.person.role === 'owner' ? 'Owner' : 'Member'}</dd>
          <dt>Account</dt>
          <dd>{session.account.name}</dd>
        </dl>
      </div>
      <Totp />
      <div className="card">
        <h2>Sessions</h2>
        <p>Signing out everywhere ends this session and every other one you have, on every device.</p>
        <FormError error={everywhere.error} />
        <div className="actions">
          <button type="button" className="button secondary" onClick={signOutEverywhere} disabled={everywhere.busy}>
            Sign out everywhere
          </button>
        </div>
      </div>
    </section>
  );
}

function Totp() {
  const session = useSignedIn();
  const { setSession } = useSession();
  const [setup, setSetup] = useState<TotpSetup | null>(null);
  const [code, setCode] = useState('');
  const [recovery, setRecovery] = useState<string[] | null>(null);
  const [password, setPassword] = useState('');
  const [turningOff, setTurningOff] = useState(false);
  const [off, setOff] = useState(false);
  const { busy, error, setError, run } = useAction();

  const refresh = async () => setSession(await api<Session>('GET', '/session'));

  const start = () =>
    run(async () => {
      setSetup(await api<TotpSetup>('POST', '/totp'));
      setOff(false);
    });
  const confirm = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const res = await api<{ recoveryCodes: string[] }>('POST', '/totp/confirm', { code: code.trim() });
      setRecovery(res.recoveryCodes);
      setSetup(null);
      setCode('');
      await refresh();
    });
  };
  const turnOff = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await api('DELETE', '/totp', { password });
      setPassword('');
      setTurningOff(false);
      setRecovery(null);
      setOff(true);
      await refresh();
    });
  };

  return (
    <div className="card">
      <h2>Two-step sign-in</h2>
      {recovery ? (
        <div className="shown-once">
          <Notice>
            Two-step sign-in is on. Keep these recovery codes somewhere safe: each signs you in once, and they are shown only now.
          </Notice>
          <ul className="codes mono" aria-label="Recovery codes">
            {recovery.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
          <CopyField label="All recovery codes" value={recovery.join(' ')} />
        </div>
      ) : null}
      {off ? <Notice>Two-step sign-in is off.</Notice> : null}
      {session.person.totpEnabled ? (
        turningOff ? (
          <form onSubmit={turnOff} noValidate>
            <Field
              label="Your password"
              name="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
            <FormError error={error} />
            <div className="actions">
              <button type="submit" className="button danger" disabled={busy}>
                Turn off two-step sign-in
              </button>
              <button
                type="button"
                className="button secondary"
                onClick={() => {
                  setTurningOff(false);
                  setError(null);
                }}
              >
                Cancel
              </button>
            </div>
          </form>
        ) : (
          <>
            <p>
              <span className="badge ok">On</span> Signing in asks for a code from your authenticator app.
            </p>
            <div className="actions">
              <button type="button" className="button secondary" onClick={() => setTurningOff(true)}>
                Turn off…
              </button>
            </div>
          </>
        )
      ) : setup ? (
        <form onSubmit={confirm} noValidate>
          <p>Scan this code with your authenticator app, or type the key into it, then enter the 6-digit code it shows.</p>
          <img
            className="qr"
            src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(setup.qrSvg)}`}
            alt="QR code for your authenticator app"
            width={192}
            height={192}
          />
          <CopyField label="Setup key" value={setup.secret} />
          <Field
            label="Code from the app"
            name="code"
            autoComplete="one-time-code"
            inputMode="numeric"
            value={code}
            onChange={(e) => setCode(e.target.value)}
            required
          />
          <FormError error={error} />
          <div className="actions">
            <button type="submit" className="button primary" disabled={busy}>
              Turn on
            </button>
            <button type="button" className="button secondary" onClick={() => setSetup(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <p>
            <span className="badge">Off</span> Add a code from an authenticator app to your password when you sign in.
          </p>
          <FormError error={error} />
          <div className="actions">
            <button type="button" className="button primary" onClick={start} disabled={busy}>
              Set up two-step sign-in
            </button>
          </div>
        </>
      )}
    </div>
  );
}
