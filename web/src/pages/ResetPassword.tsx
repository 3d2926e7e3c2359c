import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { Link } from '../router';
import { Field, FormError, Notice, useAction } from '../ui';
import { AuthFrame } from './AuthFrame';

/** /dashboard/reset/:token, from the mailed link: a new password, then signing in with it. */
export function ResetPassword({ token }: { token: string }) {
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [done, setDone] = useState(false);
  const { busy, error, setError, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (password !== confirm) {
      setError('The two passwords differ; type the same one twice.');
      return;
    }
    void run(async () => {
      await api('POST', `/password-resets/${encodeURIComponent(token)}`, { password });
      setDone(true);
    });
  };
  return (
    <AuthFrame title="Choose a new password">
      {done ? (
        <>
          <Notice>Your password is changed, and every session you had is signed out.</Notice>
          <p className="below-form">
            <Link to="/sign-in">Sign in</Link>
          </p>
        </>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
            required
          />
          <Field
            label="Type it again"
            name="confirm"
            type="password"
            autoComplete="new-password"
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
            required
          />
          <FormError error={error} />
          <div className="actions">
            <button type="submit" className="button primary" disabled={busy}>
              Set the password
            </button>
          </div>
        </form>
      )}
    </AuthFrame>
  );
}
