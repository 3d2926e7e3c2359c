import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { Link } from '../router';
import { Field, FormError, Notice, useAction } from '../ui';
import { AuthFrame } from './AuthFrame';

export function ForgotPassword() {
  const [email, setEmail] = useState('');
  const [sent, setSent] = useState(false);
  const { busy, error, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      await api('POST', '/password-resets', { email });
      setSent(true);
    });
  };
  return (
    <AuthFrame title="Reset your password" lede="We mail a link to set a new password, if the address belongs to someone here.">
      {sent ? (
        <Notice>If {email} has an account here, a link to reset the password is on its way. It works once.</Notice>
      ) : (
        <form onSubmit={submit} noValidate>
          <Field
            label="Email"
            name="email"
            type="email"
            autoComplete="username"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            required
          />
          <FormError error={error} />
          <div className="actions">
            <button type="submit" className="button primary" disabled={busy}>
              Send the link
            </button>
          </div>
        </form>
      )}
      <p className="below-form">
        <Link to="/sign-in">Back to sign in</Link>
      </p>
    </AuthFrame>
  );
}
