import { type FormEvent, useState } from 'react';
import { ApiError, api, type Session } from '../api';
import { Link, navigate } from '../router';
import { useSession } from '../session';
import { Field, FormError, useAction } from '../ui';
import { AuthFrame } from './AuthFrame';

/** Email and password; when the server answers codeRequired, a second step asks for the authenticator code. */
export function SignIn() {
  const { setSession } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [codeStep, setCodeStep] = useState(false);
  const { busy, error, setError, run } = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      try {
        const s = await api<Session>('POST', '/session', codeStep ? { email, password, code: code.trim() } : { email, password });
        setSession(s);
        navigate('/settings/profile', true);
      } catch (err) {
        if (err instanceof ApiError && err.body.codeRequired === true) {
          // The first time it is the next step, not a mistake; a wrong code says so.
          if (!codeStep) {
            setCodeStep(true);
            setError(null);
            return;
          }
        }
        throw err;
      }
    });
  };

  return (
    <AuthFrame
      title="Sign in"
      lede={codeStep ? 'Enter the 6-digit code from your authenticator app, or one of your recovery codes.' : undefined}
    >
      <form onSubmit={submit} noValidate>
        {codeStep ? (
          <Field
            label="Authentication code"
            name="code"
            autoComplete="one-time-code"
            inputMode="text"
            value={code}
            onChange={(e) => setCode(e.target.value)}
            required
            autoFocus
          />
        ) : (
          <>
            <Field
              label="Email"
              name="email"
              type="email"
              autoComplete="username"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              required
            />
            <Field
              label="Password"
              name="password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
          </>
        )}
        <FormError error={error} />
        <div className="actions">
          <button type="submit" className="button primary" disabled={busy}>
            {codeStep ? 'Verify' : 'Sign in'}
          </button>
          {codeStep ? (
            <button
              type="button"
              className="button secondary"
              onClick={() => {
                setCodeStep(false);
                setCode('');
                setError(null);
              }}
            >
              Back
            </button>
          ) : null}
        </div>
      </form>
      <p className="below-form">
        <Link to="/forgot">Forgot your password?</Link>
      </p>
    </AuthFrame>
  );
}
