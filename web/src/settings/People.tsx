import { type FormEvent, useId, useState } from 'react';
import { api, type Role } from '../api';
import { ConfirmDelete } from '../Confirm';
import { isOwner, useSignedIn } from '../session';
import { Field, FormError, formatDate, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';

interface Person {
  id: string;
  email: string;
  name: string;
  role: Role;
  totpEnabled: boolean;
  createdAt: string | number;
  invitedPending?: boolean;
}
interface Invitation {
  id: string;
  email: string;
  role: Role;
  expiresAt: string | number;
}

/** Settings → People: everyone in the account; an owner also invites, changes roles and removes. */
export function People() {
  const session = useSignedIn();
  const owner = isOwner(session);
  const people = useLoad(() => api<{ items: Person[]; invitations: Invitation[] }>('GET', '/people'));
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const [invited, setInvited] = useState<string | null>(null);
  const invite = useAction();
  const act = useAction();
  const roleId = useId();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void invite.run(async () => {
      const res = await api<{ invitation: Invitation }>('POST', '/people/invitations', { email, role });
      setInvited(res.invitation.email);
      setEmail('');
      await people.reload();
    });
  };

  return (
    <section>
      <PageHeader title="People">
        {owner
          ? 'Everyone who can sign in to this account. Owners manage hooks, people, mail and approvals; members do the daily work.'
          : 'Everyone who can sign in to this account.'}
      </PageHeader>

      {owner ? (
        <form className="card" onSubmit={submit} noValidate aria-labelledby="invite-heading">
          <h2 id="invite-heading">Invite someone</h2>
          <p className="muted">We mail them a link to choose a name and a password. It is never shown here.</p>
          {invited ? <Notice>An invitation is on its way to {invited}.</Notice> : null}
          <div className="form-row">
            <Field label="Email" name="email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} required />
            <div className="field">
              <label htmlFor={roleId}>Role</label>
              <select id={roleId} name="role" value={role} onChange={(e) => setRole(e.target.value as Role)}>
                <option value="member">Member</option>
                <option value="owner">Owner</option>
              </select>
            </div>
          </div>
          <FormError error={invite.error} />
          <div className="actions">
            <button type="submit" className="button primary" disabled={invite.busy}>
              Send invitation
            </button>
          </div>
        </form>
      ) : null}

      <div className="card">
        <h2>Team</h2>
        <FormError error={people.error ?? act.error} />
        {people.loading && !people.data ? <Loading /> : null}
        {people.data ? (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Email</th>
                  <th scope="col">Role</th>
                  <th scope="col">Two-step</th>
                  <th scope="col">Since</th>
                  {owner ? (
                    <th scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  ) : null}
                </tr>
              </thead>
              <tbody>
                {people.data.items.map((p) => (
                  <tr key={p.id}>
                    <td>
                      {p.name}
                      {p.id === session.person.id ? <span className="muted"> (you)</span> : null}
                    </td>
                    <td>{p.email}</td>
                    <td>
                      {owner ? (
                        <RoleSelect
                          person={p}
                          disabled={act.busy}
                          onChange={(r) =>
                            act.run(async () => {
                              await api('PATCH', `/people/${encodeURIComponent(p.id)}`, { role: r });
                              await people.reload();
                            })
                          }
                        />
                      ) : p.role === 'owner' ? (
                        'Owner'
                      ) : (
                        'Member'
                      )}
                    </td>
                    <td>{p.totpEnabled ? 'On' : 'Off'}</td>
                    <td>{formatDate(p.createdAt)}</td>
                    {owner ? (
                      <td className="row-actions">
                        {p.id === session.person.id ? null : (
                          <ConfirmDelete
                            label="Remove"
                            confirmLabel={`Remove ${p.name || p.email}`}
                            question="Their sessions end and their tokens are revoked."
                            path={`/people/${encodeURIComponent(p.id)}`}
                            action={act}
                            after={people.reload}
                          />
                        )}
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>

      {people.data && people.data.invitations.length > 0 ? (
        <div className="card">
          <h2>Pending invitations</h2>
          <ul className="plain-list">
            {people.data.invitations.map((i) => (
              <li key={i.id} className="list-row">
                <span>
                  {i.email}{' '}
                  <span className="muted">
                    · {i.role === 'owner' ? 'Owner' : 'Member'} · expires {formatDate(i.expiresAt)}
                  </span>
                </span>
                {owner ? (
                  <ConfirmDelete
                    label="Withdraw"
                    confirmLabel={`Withdraw the invitation to ${i.email}`}
                    question="The link stops working."
                    path={`/people/invitations/${encodeURIComponent(i.id)}`}
                    action={act}
                    after={people.reload}
                  />
                ) : null}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

function RoleSelect({ person, onChange, disabled }: { person: Person; onChange: (r: Role) => void; disabled: boolean }) {
  const id = useId();
  return (
    <>
      <label htmlFor={id} className="visually-hidden">
        Role of {person.name || person.email}
      </label>
      <select id={id} value={person.role} disabled={disabled} onChange={(e) => onChange(e.target.value as Role)}>
        <option value="member">Member</option>
        <option value="owner">Owner</option>
      </select>
    </>
  );
}
