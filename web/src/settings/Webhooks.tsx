import { type FormEvent, useId, useState } from 'react';
import { api } from '../api';
import { ConfirmButton, ConfirmDelete } from '../Confirm';
import { CopyField, Field, FormError, formatDate, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';

interface Hook {
  id: string;
  label: string;
  enabled: boolean;
  createdAt: string | number;
  lastDeliveryAt: string | number | null;
}

/** Settings → Webhooks (owners only): create, the URL shown once, disable/enable, regenerate, delete, deliveries. */
export function Webhooks() {
  const hooks = useLoad(() => api<{ items: Hook[] }>('GET', '/hooks'));
  const [label, setLabel] = useState('');
  const [shown, setShown] = useState<{ label: string; url: string; regenerated: boolean } | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const create = useAction();
  const act = useAction();

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run(async () => {
      const res = await api<{ hook: Hook; url: string }>('POST', '/hooks', { label });
      setShown({ label: res.hook.label, url: res.url, regenerated: false });
      setLabel('');
      await hooks.reload();
    });
  };
  const verb = (hook: Hook, path: string) =>
    act.run(async () => {
      const res = await api<{ hook: Hook; url?: string }>('POST', `/hooks/${encodeURIComponent(hook.id)}/${path}`);
      if (res?.url) setShown({ label: hook.label, url: res.url, regenerated: true });
      await hooks.reload();
    });

  return (
    <section>
      <PageHeader title="Webhooks">
        A hook is a secret URL another service posts events to; the agent reads each delivery as data. The URL is the whole credential and
        is shown once.
      </PageHeader>

      {shown ? (
        <div className="card shown-once">
          <Notice>
            {shown.regenerated ? `“${shown.label}” has a new URL; the old one is refused from now on.` : `Hook “${shown.label}” is ready.`}
            {' Copy the URL now: it is shown only once.'}
          </Notice>
          <CopyField label="Hook URL" value={shown.url} />
          <div className="actions">
            <button type="button" className="button secondary" onClick={() => setShown(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}

      <form className="card" onSubmit={submit} noValidate aria-labelledby="new-hook">
        <h2 id="new-hook">New hook</h2>
        <Field
          label="Label"
          name="label"
          value={label}
          onChange={(e) => setLabel(e.target.value)}
          hint="Lowercase letters, digits, - and _, at most 32 characters, e.g. stripe-events."
          required
        />
        <FormError error={create.error} />
        <div className="actions">
          <button type="submit" className="button primary" disabled={create.busy}>
            Create hook
          </button>
        </div>
      </form>

      <div className="card">
        <h2>Hooks</h2>
        <FormError error={hooks.error ?? act.error} />
        {hooks.loading && !hooks.data ? <Loading /> : null}
        {hooks.data && hooks.data.items.length === 0 ? <p className="muted">No hooks yet.</p> : null}
        <ul className="hook-list">
          {hooks.data?.items.map((h) => (
            <li key={h.id} className="hook">
              <div className="hook-head">
                <div>
                  <h3 className="mono">{h.label}</h3>
                  <p className="muted small">
                    <span className={h.enabled ? 'badge ok' : 'badge'}>{h.enabled ? 'Enabled' : 'Disabled'}</span> Created{' '}
                    {formatDate(h.createdAt)} · Last delivery {h.lastDeliveryAt ? formatDate(h.lastDeliveryAt) : 'never'}
                  </p>
                </div>
                <div className="row-actions">
                  <button
                    type="button"
                    className="button secondary"
                    aria-expanded={open === h.id}
                    onClick={() => setOpen(open === h.id ? null : h.id)}
                  >
                    Deliveries<span className="visually-hidden"> of {h.label}</span>
                  </button>
                  <button
                    type="button"
                    className="button secondary"
                    disabled={act.busy}
                    onClick={() => verb(h, h.enabled ? 'disable' : 'enable')}
                  >
                    {h.enabled ? 'Disable' : 'Enable'}
                    <span className="visually-hidden"> {h.label}</span>
                  </button>
                  <ConfirmButton
                    label="Regenerate URL"
                    confirmLabel="Regenerate"
                    question="The old URL stops working."
                    disabled={act.busy}
                    onConfirm={() => verb(h, 'regenerate')}
                  />
                  <ConfirmDelete
                    label="Delete"
                    confirmLabel={`Delete “${h.label}”`}
                    question="Deliveries to it are refused from now on."
                    path={`/hooks/${encodeURIComponent(h.id)}`}
                    action={act}
                    after={async () => {
                      if (open === h.id) setOpen(null);
                      await hooks.reload();
                    }}
                  />
                </div>
              </div>
              {open === h.id ? <Deliveries hook={h} /> : null}
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}

interface Delivery {
  id: string;
  outcome: 'accepted' | 'rate_limited' | 'worker_error';
  receivedAt: string | number;
  sizeBytes: number;
  /** The body's first characters; null when it was not kept (rate limited). */
  preview: string | null;
  replayOf: string | null;
  /** Deliveries the entry stands for (a minute of refusals shares one entry). */
  count: number;
  lastAt: string | number | null;
  error: string | null;
}

const OUTCOMES: Record<Delivery['outcome'], string> = { accepted: 'Accepted', rate_limited: 'Rate limited', worker_error: 'Worker error' };

function Deliveries({ hook }: { hook: Hook }) {
  const [outcome, setOutcome] = useState('');
  const [more, setMore] = useState<Delivery[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [replayed, setReplayed] = useState<string | null>(null);
  const selectId = useId();
  const path = (c: string | null) => {
    const q = new URLSearchParams({ limit: '20' });
    if (outcome) q.set('outcome', outcome);
    if (c) q.set('cursor', c);
    return `/hooks/${encodeURIComponent(hook.id)}/deliveries?${q}`;
  };
  const first = useLoad(async () => {
    const res = await api<{ items: Delivery[]; nextCursor: string | null }>('GET', path(null));
    setMore([]);
    setCursor(res.nextCursor);
    return res.items;
  }, `${hook.id} ${outcome}`);
  const page = useAction();
  const replay = useAction();
  const items = [...(first.data ?? []), ...more];

  return (
    <div className="deliveries">
      <div className="deliveries-bar">
        <h4>Deliveries</h4>
        <div className="field inline">
          <label htmlFor={selectId}>Outcome</label>
          <select id={selectId} value={outcome} onChange={(e) => setOutcome(e.target.value)}>
            <option value="">All</option>
            {Object.entries(OUTCOMES).map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </div>
        <button type="button" className="button secondary" onClick={() => void first.reload()}>
          Refresh
        </button>
      </div>
      <FormError error={first.error ?? page.error ?? replay.error} />
      {replayed ? <Notice>Replayed as delivery {replayed}: it is handed to the agent as a new delivery.</Notice> : null}
      {first.loading && !first.data ? <Loading /> : null}
      {first.data && items.length === 0 ? <p className="muted">No deliveries{outcome ? ' with this outcome' : ''}.</p> : null}
      <ul className="delivery-list">
        {items.map((d) => (
          <li key={d.id} className="delivery">
            <div className="delivery-head">
              <span className={`badge ${d.outcome === 'accepted' ? 'ok' : 'warn'}`}>{OUTCOMES[d.outcome] ?? d.outcome}</span>
              <span className="small">{formatDate(d.receivedAt)}</span>
              <span className="small muted">{d.sizeBytes} bytes</span>
              {d.count > 1 ? (
                <span className="small muted">
                  ×{d.count}, the last {formatDate(d.lastAt)}
                </span>
              ) : null}
              {d.replayOf ? <span className="small muted">replay of {d.replayOf}</span> : null}
              {d.outcome === 'rate_limited' ? null : (
                <button
                  type="button"
                  className="button secondary small-button"
                  disabled={replay.busy || !hook.enabled}
                  onClick={() =>
                    replay.run(async () => {
                      const res = await api<{ deliveryId: string }>(
                        'POST',
                        `/hooks/${encodeURIComponent(hook.id)}/deliveries/${encodeURIComponent(d.id)}/replay`,
                      );
                      setReplayed(res.deliveryId);
                      await first.reload();
                    })
                  }
                >
                  Replay<span className="visually-hidden"> delivery {d.id}</span>
                </button>
              )}
            </div>
            {d.error ? <p className="small form-error">{d.error}</p> : null}
            <pre className="preview">{d.preview}</pre>
          </li>
        ))}
      </ul>
      {cursor ? (
        <button
          type="button"
          className="button secondary"
          disabled={page.busy}
          onClick={() =>
            page.run(async () => {
              const res = await api<{ items: Delivery[]; nextCursor: string | null }>('GET', path(cursor));
              setMore((m) => [...m, ...res.items]);
              setCursor(res.nextCursor);
            })
          }
        >
          Show older
        </button>
      ) : null}
    </div>
  );
}
