import { type FormEvent, Fragment, useCallback, useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { ConfirmButton } from '../Confirm';
import { FormError, formatDate, Loading, Notice, PageHeader } from '../ui';
import { type LeadDetail, LeadsNav } from './Leads';
import { Tags } from './LeadTable';

interface TimelineEntry {
  kind: 'sent' | 'reply' | 'auto_reply' | 'bounce' | 'unsubscribe' | 'complaint' | 'visit' | 'research';
  at: number;
  to: string | null;
  step: number | null;
  replyKind: string | null;
  channel: string | null;
  url: string | null;
  key: string | null;
}

/** One entry in words. */
function said(e: TimelineEntry): string {
  switch (e.kind) {
    case 'sent':
      return `Mail sent to ${e.to ?? 'a contact'}${e.step ? ` (follow-up ${e.step})` : ''}`;
    case 'reply':
      return `Replied${e.replyKind ? ` (${e.replyKind.replace(/_/g, ' ')})` : ''}`;
    case 'auto_reply':
      return 'Automatic reply';
    case 'bounce':
      return 'Bounced';
    case 'unsubscribe':
      return 'Unsubscribed';
    case 'complaint':
      return 'Marked the mail as spam';
    case 'visit':
      return `Visited ${e.url ?? 'a link'} from ${e.channel ?? 'a link'}`;
    case 'research':
      return `Research: ${e.key ?? ''}`;
  }
}

/** What happened to the lead, newest first (`GET /dashboard/api/leads/{id}/timeline`). */
function Timeline({ id }: { id: string }) {
  const [timeline, setTimeline] = useState<{ entries: TimelineEntry[]; truncated: boolean } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ entries: TimelineEntry[]; truncated: boolean }>('GET', `/leads/${encodeURIComponent(id)}/timeline`).then(setTimeline, (err) =>
      setError(errorText(err)),
    );
  }, [id]);
  return (
    <div className="card">
      <h2>Timeline</h2>
      <FormError error={error} />
      {!timeline && !error ? <Loading /> : null}
      {timeline && !timeline.entries.length ? <p className="muted">Nothing has happened yet.</p> : null}
      {timeline?.entries.length ? (
        <ol className="plain-list timeline">
          {timeline.entries.map((e) => (
            <li key={`${e.kind}-${e.at}-${e.to ?? ''}-${e.key ?? ''}-${e.url ?? ''}-${e.replyKind ?? ''}`}>
              <span className={`badge${e.kind === 'reply' ? ' ok' : e.kind === 'bounce' || e.kind === 'complaint' ? ' warn' : ''}`}>
                {e.kind.replace(/_/g, ' ')}
              </span>{' '}
              {said(e)} <span className="muted small">{formatDate(e.at)}</span>
            </li>
          ))}
        </ol>
      ) : null}
      {timeline?.truncated ? <p className="muted small">Only the newest {timeline.entries.length} are shown.</p> : null}
    </div>
  );
}

type LabelField = 'vertical' | 'archetype' | 'tags';

/** The lead's labels, changed with `PATCH /v1/leads/{id}`; the server's sentence shows next to the field it names. */
function Labels({ lead, onSaved }: { lead: LeadDetail; onSaved: (l: Pick<LeadDetail, LabelField>) => void }) {
  const id = useId();
  const [vertical, setVertical] = useState(lead.vertical ?? '');
  const [archetype, setArchetype] = useState(lead.archetype ?? '');
  const [tags, setTags] = useState(lead.tags.join(', '));
  const [errors, setErrors] = useState<Partial<Record<LabelField | 'form', string>>>({});
  const [saved, setSaved] = useState(false);
  const save = async (e: FormEvent) => {
    e.preventDefault();
    setSaved(false);
    try {
      const body = {
        vertical: vertical.trim() || null,
        archetype: archetype.trim() || null,
        tags: tags
          .split(',')
          .map((t) => t.trim())
          .filter(Boolean),
      };
      const res = await api<{ lead: Pick<LeadDetail, LabelField> }>('PATCH', `/v1/leads/${encodeURIComponent(lead.id)}`, body);
      setErrors({});
      setSaved(true);
      setTags(res.lead.tags.join(', '));
      onSaved(res.lead);
    } catch (err) {
      const text = errorText(err);
      const field = /^(vertical|archetype|tags)\b/.exec(text)?.[1] as LabelField | undefined;
      setErrors({ [field ?? 'form']: text });
    }
  };
  const input = (field: LabelField, label: string, value: string, set: (v: string) => void, hint: string) => (
    <div className="field">
      <label htmlFor={`${id}-${field}`}>{label}</label>
      <input
        id={`${id}-${field}`}
        value={value}
        onChange={(e) => {
          set(e.target.value);
          setErrors(({ [field]: _, ...rest }) => rest);
        }}
        aria-invalid={errors[field] ? true : undefined}
        aria-describedby={`${id}-${field}-hint${errors[field] ? ` ${id}-${field}-error` : ''}`}
      />
      <p className="hint" id={`${id}-${field}-hint`}>
        {hint}
      </p>
      {errors[field] ? (
        <p className="form-error" role="alert" id={`${id}-${field}-error`}>
          {errors[field]}
        </p>
      ) : null}
    </div>
  );
  return (
    <form className="card" onSubmit={save}>
      <h2>Labels</h2>
      {input('vertical', 'Vertical', vertical, setVertical, 'The market it is in; at most 120 characters. Empty clears it.')}
      {input('archetype', 'Archetype', archetype, setArchetype, 'The kind of customer it is; at most 120 characters.')}
      {input('tags', 'Tags', tags, setTags, 'Separated by commas: at most 20, each at most 64 characters.')}
      <div className="actions">
        <button type="submit" className="button primary">
          Save labels
        </button>
      </div>
      {saved ? <Notice>Labels saved.</Notice> : null}
      <FormError error={errors.form ?? null} />
    </form>
  );
}

/** Adds a domain or an address to the block list from the lead's page, asked again in place. */
function BlockButton({ value, label }: { value: string; label: string }) {
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="block-action">
      {result ? (
        <span role="status">{result}</span>
      ) : (
        <ConfirmButton
          label={label}
          confirmLabel={`Block ${value}`}
          question={`The agent will never contact ${value} again.`}
          onConfirm={async () => {
            try {
              const res = await api<{ added: number; existing: number }>('POST', '/v1/blocklist', { entries: [value] });
              setResult(res.added ? `${value} is now on the block list.` : `${value} was already on the block list.`);
            } catch (err) {
              setError(errorText(err));
            }
          }}
        />
      )}
      <FormError error={error} />
    </span>
  );
}

/** One lead: its labels (editable), its timeline, contacts (each blockable), draft and research. */
export function LeadPage({ id }: { id: string }) {
  const [lead, setLead] = useState<LeadDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ lead: LeadDetail }>('GET', `/v1/leads/${encodeURIComponent(id)}`).then(
      (r) => setLead(r.lead),
      (err: unknown) => setError(errorText(err)),
    );
  }, [id]);
  const saved = useCallback((l: Pick<LeadDetail, LabelField>) => setLead((x) => (x ? { ...x, ...l } : x)), []);
  if (error)
    return (
      <section>
        <PageHeader title="Lead" />
        <LeadsNav />
        <FormError error={error} />
      </section>
    );
  if (!lead) return <Loading />;
  return (
    <section>
      <PageHeader title={lead.companyName ?? lead.domain}>{lead.domain}</PageHeader>
      <LeadsNav />
      <div className="card">
        <dl className="facts">
          <dt>Status</dt>
          <dd>{lead.status}</dd>
          <dt>Reply</dt>
          <dd>{lead.replyKind ?? '—'}</dd>
          <dt>Score</dt>
          <dd>{lead.score ?? '—'}</dd>
          <dt>Vertical</dt>
          <dd>{lead.vertical ?? '—'}</dd>
          <dt>Archetype</dt>
          <dd>{lead.archetype ?? '—'}</dd>
          <dt>Tags</dt>
          <dd>{lead.tags.length ? <Tags tags={lead.tags} /> : '—'}</dd>
          {lead.fields.map((f) => (
            <Fragment key={f.key}>
              <dt>{f.key}</dt>
              <dd>{f.value}</dd>
            </Fragment>
          ))}
        </dl>
        <div className="actions">
          <BlockButton value={lead.domain} label="Block this domain" />
        </div>
      </div>
      <Labels lead={lead} onSaved={saved} />
      <Timeline id={lead.id} />
      <div className="card">
        <h2>Contacts</h2>
        {lead.contacts.length ? (
          <ul className="plain-list">
            {lead.contacts.map((c, i) => (
              <li key={c.email ?? i} className="list-row">
                <span>
                  {c.name ? `${c.name} · ` : ''}
                  {c.email ?? '—'}
                </span>
                {c.email ? <BlockButton value={c.email} label={`Block ${c.email}`} /> : null}
              </li>
            ))}
          </ul>
        ) : (
          <p className="muted">No contacts.</p>
        )}
        {lead.contactsTruncated ? <p className="muted small">Only the first 50 are shown.</p> : null}
      </div>
      {lead.draft ? (
        <div className="card">
          <h2>Draft</h2>
          <p>
            <strong>{lead.draft.subject}</strong>
          </p>
          <p className="preview">{lead.draft.body}</p>
        </div>
      ) : null}
      {lead.research.length ? (
        <div className="card">
          <h2>Research</h2>
          {lead.research.map((r) => (
            <div key={r.key}>
              <h3>{r.key}</h3>
              <p>{r.reasoning}</p>
              {r.sources.length ? (
                <ul>
                  {r.sources.map((s) => (
                    <li key={s.url}>
                      <a href={s.url} rel="noopener noreferrer nofollow" target="_blank">
                        {s.title || s.url}
                      </a>
                    </li>
                  ))}
                </ul>
              ) : null}
            </div>
          ))}
        </div>
      ) : null}
    </section>
  );
}
