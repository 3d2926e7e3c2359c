import { useId, useState } from 'react';
import { api } from '../api';
import { isOwner, useSignedIn } from '../session';
import { FormError, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';

interface Approval {
  kind: string;
  mode: string;
  ladder: { state: 'off' | 'climbing' | 'trusted' | string; words: string };
}

const KIND_NAMES: Record<string, string> = {
  email: 'Emails',
  sequence: 'Sequences',
  network_message: 'Network messages',
  blog_post: 'Blog posts',
  ad_test: 'Ad tests',
  spend: 'Spending',
  experiment: 'Experiments',
};
/** The server's modes (src/review/approval.service.ts), in the words the page uses. */
const MODES: Record<string, string> = { always_ask: 'Always ask', trust_ladder: 'Ask, then trust', ship: 'Run without approval' };

/** Settings → Approvals: per kind of work, whether it waits for a person, and where the trust ladder stands. */
export function Approvals() {
  const owner = isOwner(useSignedIn());
  const approvals = useLoad(() => api<{ items: Approval[] }>('GET', '/settings/approvals'));
  const save = useAction();
  const [saved, setSaved] = useState<string | null>(null);

  const change = (kind: string, mode: string) =>
    save.run(async () => {
      setSaved(null);
      await api('PATCH', `/settings/approvals/${encodeURIComponent(kind)}`, { mode });
      await approvals.reload();
      setSaved(kind);
    });

  return (
    <section>
      <PageHeader title="Approvals">
        Each kind of work waits in the review queue for a person unless it is set to run without approval. With “Ask, then trust”, once
        enough of a kind are approved unchanged, new ones resolve themselves after a delay unless someone acts first. Spending always waits.
      </PageHeader>
      <FormError error={approvals.error ?? save.error} />
      {saved ? <Notice>{KIND_NAMES[saved] ?? saved}: saved.</Notice> : null}
      {approvals.loading && !approvals.data ? <Loading /> : null}
      {approvals.data ? (
        <div className="card">
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Kind of work</th>
                  <th scope="col">Approval</th>
                  <th scope="col">Trust ladder</th>
                </tr>
              </thead>
              <tbody>
                {approvals.data.items.map((a) => (
                  <tr key={a.kind}>
                    <th scope="row">{KIND_NAMES[a.kind] ?? a.kind}</th>
                    <td>
                      {owner ? <ModeSelect item={a} disabled={save.busy} onChange={(m) => change(a.kind, m)} /> : (MODES[a.mode] ?? a.mode)}
                    </td>
                    <td>{a.ladder.words}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ) : null}
    </section>
  );
}

function ModeSelect({ item, onChange, disabled }: { item: Approval; onChange: (m: string) => void; disabled: boolean }) {
  const id = useId();
  return (
    <>
      <label htmlFor={id} className="visually-hidden">
        Approval for {KIND_NAMES[item.kind] ?? item.kind}
      </label>
      <select id={id} value={item.mode} disabled={disabled} onChange={(e) => onChange(e.target.value)}>
        {Object.entries(MODES).map(([value, text]) => (
          <option key={value} value={value} disabled={item.kind === 'spend' && value !== 'always_ask'}>
            {text}
          </option>
        ))}
        {MODES[item.mode] ? null : <option value={item.mode}>{item.mode}</option>}
      </select>
    </>
  );
}
