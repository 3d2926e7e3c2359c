import { type FormEvent, useState } from 'react';
import { api } from '../api';
import { useSignedIn } from '../session';
import { ConfirmDelete } from '../Confirm';
import { CopyField, Field, FormError, formatDate, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';

interface Scope {
  scope: string;
  description: string;
}
interface Token {
  tokenId: string;
  label: string;
  scopes: string[];
  createdAt: string | number;
  lastUsedAt: string | number | null;
  /** null: minted by an operator (the admin CLI), held by no person. */
  holder: { id: string; name: string; email: string } | null;
}

/** Settings → API tokens: mint (label and scopes; the secret shown once), the live tokens, revoke. */
export function Tokens() {
  const session = useSignedIn();
  const scopes = useLoad(() => api<{ items: Scope[] }>('GET', '/scopes'));
  const tokens = useLoad(() => api<{ items: Token[] }>('GET', '/tokens'));
  const [label, setLabel] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [minted, setMinted] = useState<{ label: string; secret: string } | null>(null);
  const mint = useAction();
  const revoke = useAction();

  const toggle = (scope: string, on: boolean) =>
    setChosen((prev) => {
      const next = new Set(prev);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void mint.run(async () => {
      const res = await api<{ token: Token; secret: string }>('POST', '/tokens', { label, scopes: [...chosen] });
      setMinted({ label: res.token.label, secret: res.secret });
      setLabel('');
      setChosen(new Set());
      await tokens.reload();
    });
  };

  return (
    <section>
      <PageHeader title="API tokens">
        A token lets a program act for you through the API, with the scopes you give it. Name it for who or what holds it.
      </PageHeader>

      {minted ? (
        <div className="card shown-once">
          <Notice>Token “{minted.label}” is ready. Copy it now: it is shown only once.</Notice>
          <CopyField label="Your new token" value={minted.secret} hint="Send it as Authorization: Bearer <token>." />
          <div className="actions">
            <button type="button" className="button secondary" onClick={() => setMinted(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}

      <form className="card" onSubmit={submit} noValidate aria-labelledby="mint-heading">
        <h2 id="mint-heading">New token</h2>
        <Field
          label="Label"
          name="label"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
          hint="Who holds it, e.g. “Jane’s laptop” or “CRM sync”."
          required
        />
        <fieldset className="scopes">
          <legend>Scopes</legend>
          {scopes.loading && !scopes.data ? <Loading /> : null}
          <FormError error={scopes.error} />
          {scopes.data?.items.map((s) => (
            <label key={s.scope} className="check">
              <input
                type="checkbox"
                name="scopes"
                value={s.scope}
                checked={chosen.has(s.scope)}
                onChange={(e) => toggle(s.scope, e.target.checked)}
              />
              <span>
                <span className="mono">{s.scope}</span>
                <span className="muted"> — {s.description}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <FormError error={mint.error} />
        <div className="actions">
          <button type="submit" className="button primary" disabled={mint.busy}>
            Create token
          </button>
        </div>
      </form>

      <div className="card">
        <h2>{session.person.role === 'owner' ? 'Live tokens in this account' : 'Your live tokens'}</h2>
        <FormError error={tokens.error ?? revoke.error} />
        {tokens.loading && !tokens.data ? <Loading /> : null}
        {tokens.data && tokens.data.items.length === 0 ? <p className="muted">No live tokens.</p> : null}
        {tokens.data && tokens.data.items.length > 0 ? (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Label</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Holder</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {tokens.data.items.map((t) => (
                  <tr key={t.tokenId}>
                    <td>{t.label}</td>
                    <td>
                      <ul className="tags">
                        {t.scopes.map((s) => (
                          <li key={s} className="tag mono">
                            {s}
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td>{t.holder ? t.holder.name || t.holder.email : <span className="muted">Operator</span>}</td>
                    <td>{formatDate(t.createdAt)}</td>
                    <td>{t.lastUsedAt ? formatDate(t.lastUsedAt) : 'Never'}</td>
                    <td className="row-actions">
                      <ConfirmDelete
                        label="Revoke"
                        confirmLabel={`Revoke “${t.label}”`}
                        question="Programs using it stop working at once."
                        path={`/tokens/${encodeURIComponent(t.tokenId)}`}
                        action={revoke}
                        after={tokens.reload}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </div>
    </section>
  );
}
