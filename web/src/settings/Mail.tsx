import { type FormEvent, useEffect, useState } from 'react';
import { api } from '../api';
import { isOwner, useSignedIn } from '../session';
import { CopyField, Field, FormError, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';

interface MailSettings {
  from: string;
  /** The From domain's newest key; selector, name, value and record null while the operator has made none. */
  dkim: { domain: string; selector: string | null; name: string | null; value: string | null; record: string | null };
  inboundAddress: string;
}

/** Settings → Mail: the From address (an owner changes it), the DKIM record to publish, the inbound address. */
export function Mail() {
  const owner = isOwner(useSignedIn());
  const mail = useLoad(() => api<MailSettings>('GET', '/settings/mail'));
  const [from, setFrom] = useState('');
  const [saved, setSaved] = useState(false);
  const save = useAction();
  useEffect(() => {
    if (mail.data) setFrom(mail.data.from);
  }, [mail.data]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    void save.run(async () => {
      mail.setData(await api<MailSettings>('PATCH', '/settings/mail', { from }));
      setSaved(true);
    });
  };

  const m = mail.data;
  return (
    <section>
      <PageHeader title="Mail">How the agent's mail leaves and how replies come back.</PageHeader>
      <FormError error={mail.error} />
      {mail.loading && !m ? <Loading /> : null}
      {m ? (
        <>
          <div className="card">
            <h2>Sender</h2>
            {owner ? (
              <form onSubmit={submit} noValidate>
                <Field
                  label="From"
                  name="from"
                  value={from}
                  onChange={(e) => setFrom(e.target.value)}
                  hint="e.g. Jane at Acme <jane@acme.example>"
                  required
                />
                <FormError error={save.error} />
                {saved ? <Notice>Saved.</Notice> : null}
                <div className="actions">
                  <button type="submit" className="button primary" disabled={save.busy}>
                    Save
                  </button>
                </div>
              </form>
            ) : (
              <dl className="facts">
                <dt>From</dt>
                <dd>{m.from}</dd>
              </dl>
            )}
          </div>
          <div className="card">
            <h2>DKIM</h2>
            <p>
              Publish this TXT record in the DNS of <span className="mono">{m.dkim.domain}</span> so receivers can check that the mail is
              yours.
            </p>
            {m.dkim.record ? (
              <>
                <CopyField label="Record name" value={m.dkim.name ?? `${m.dkim.selector}._domainkey.${m.dkim.domain}`} />
                <CopyField label="Record value (TXT)" value={m.dkim.value ?? m.dkim.record} />
                <CopyField label="Zone-file line" value={m.dkim.record} />
              </>
            ) : (
              <p className="muted">
                No DKIM key exists for this domain yet. The operator makes one (admin CLI: mail dkim generate), and its record shows here.
              </p>
            )}
          </div>
          <div className="card">
            <h2>Inbound</h2>
            <p>Each mail the agent sends carries its own thread's reply address of this form; mail to it reaches the agent as a reply.</p>
            <CopyField label="Inbound address" value={m.inboundAddress} />
          </div>
        </>
      ) : null}
    </section>
  );
}
