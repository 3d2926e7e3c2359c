import { type FormEvent, useState } from 'react';
import { api, type Session } from '../api';
import { navigate } from '../router';
import { useSession } from '../session';
import { Field, FormError, Loading, useAction, useLoad } from '../ui';
import { AuthFrame } from './AuthFrame';

interface Invitation {
  email: string;
  accountName: string;
  role: 'owner' | 'member';
}

/** /dashboard/invite/:token: the invitation's account and address, then a name and a password, signed in. */
export function AcceptInvitation({ token }: { token: string }) {
  const { setSession } = useSession();
  const invitation = useLoad(() => api<Invitation>('GET', `/invitations/${encodeURIComponent(token)}`), token);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void run(async () => {
      const s = await api<Session>('POST', `/invitations/${encodeURIComponent(token)}/accept`, { name, password });
      setSession(s);
      navigate('/settings/profile', true);
    });
  };
  const inv = invitation.data;
  if (invitation.loading && !inv) {
    return (
      <AuthFrame title="Join your team">
        <Loading />
      </AuthFrame>
    );
  }
  if (!inv) {
    return (
      <AuthFrame title="This invitation cannot be used">
        <p className="form-error" role="alert">
          {invitation.error ?? 'The invitation was not found.'}
        </p>
        <p>It may have expired or been used already. Ask the person who invited you for a new one.</p>
      </AuthFrame>
    );
  }
  return (
    <AuthFrame
      title={`Join ${inv.accountName}`}
      lede={`You are invited as ${inv.role === 'owner' ? 'an owner' : 'a member'}, with the address ${inv.email}.`}
    >
      <form onSubmit={submit} noValidate>
        <Field label="Your name" name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} required />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
          required
        />
        <FormError error={error} />
        <div className="actions">
          <button type="submit" className="button primary" disabled={busy}>
            Join and sign in
          </button>
        </div>
      </form>
    </AuthFrame>
  );
}
