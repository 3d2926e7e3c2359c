import { Fragment, useCallback, useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { Link } from '../router';
import { FormError, formatDate, Loading, PageHeader } from '../ui';

interface Lead {
  id: string;
  domain: string;
  companyName: string | null;
  status: string;
  replyKind: string | null;
  score: number | null;
  vertical: string | null;
  archetype: string | null;
  tags: string[];
  contact: { email?: string | null; name?: string | null } | null;
  createdAt: number;
}
interface LeadDetail extends Lead {
  draft: { subject: string; body: string } | null;
  research: { key: string; reasoning: string; sources: { url: string; title: string }[] }[];
  contacts: { email?: string | null; name?: string | null }[];
  contactsTruncated: boolean;
  fields: { key: string; value: string }[];
}

const STATUSES = ['new', 'researched', 'drafted', 'contacted', 'replied', 'bounced', 'unsubscribed', 'declined', 'converted'];

export function LeadsNav() {
  return (
    <p className="subnav">
      <Link to="/leads">All leads</Link> · <Link to="/leads/import">Import a CSV</Link> · <Link to="/leads/blocklist">Block list</Link>
    </p>
  );
}

/** Leads: a status filter (the server's), a search over the pages read so far, and cursor paging. */
export function Leads() {
  const id = useId();
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  const [leads, setLeads] = useState<Lead[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async (st: string, after: string | null) => {
    setBusy(true);
    try {
      const q = new URLSearchParams({ limit: '50' });
      if (st) q.set('status', st);
      if (after) q.set('cursor', after);
      const page = await api<{ leads: Lead[]; nextCursor: string | null }>('GET', `/v1/leads?${q}`);
      setLeads((ls) => (after && ls ? [...ls, ...page.leads] : page.leads));
      setCursor(page.nextCursor);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }, []);
  useEffect(() => {
    void load(status, null);
  }, [status, load]);

  const needle = search.trim().toLowerCase();
  const shown = (leads ?? []).filter(
    (l) =>
      !needle ||
      [l.domain, l.companyName, l.contact?.email, l.contact?.name, l.vertical, ...l.tags].some((v) => v?.toLowerCase().includes(needle)),
  );
  return (
    <section>
      <PageHeader title="Leads">The companies the agent found or you imported, newest first.</PageHeader>
      <LeadsNav />
      <div className="form-row filters">
        <div className="field">
          <label htmlFor={`${id}-status`}>Status</label>
          <select id={`${id}-status`} value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">Any status</option>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor={`${id}-search`}>Search</label>
          <input
            id={`${id}-search`}
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            aria-describedby={`${id}-search-hint`}
          />
          <p className="hint" id={`${id}-search-hint`}>
            Searches the leads loaded below (domain, company, contact, vertical, tags).
          </p>
        </div>
      </div>
      <FormError error={error} />
      {leads === null ? <Loading /> : null}
      {leads && shown.length === 0 ? <p className="muted">No leads match.</p> : null}
      {shown.length ? (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Company</th>
                <th scope="col">Status</th>
                <th scope="col">Contact</th>
                <th scope="col">Tags</th>
                <th scope="col">Added</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((l) => (
                <tr key={l.id}>
                  <th scope="row">
                    <Link to={`/leads/${encodeURIComponent(l.id)}`}>{l.companyName ?? l.domain}</Link>
                    {l.companyName ? <span className="muted small"> {l.domain}</span> : null}
                  </th>
                  <td>
                    <span className="badge">{l.status}</span>
                  </td>
                  <td>{l.contact?.email ?? '—'}</td>
                  <td>
                    <ul className="tags">
                      {l.tags.map((t) => (
                        <li key={t} className="tag">
                          {t}
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>{formatDate(l.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {cursor ? (
        <p>
          <button type="button" className="button secondary" disabled={busy} onClick={() => load(status, cursor)}>
            Load more
          </button>
        </p>
      ) : null}
    </section>
  );
}

/** One lead: its labels, contacts, draft and research. */
export function LeadPage({ id }: { id: string }) {
  const [lead, setLead] = useState<LeadDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api<{ lead: LeadDetail }>('GET', `/v1/leads/${encodeURIComponent(id)}`).then(
      (r) => setLead(r.lead),
      (err: unknown) => setError(errorText(err)),
    );
  }, [id]);
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
          <dd>{lead.tags.length ? lead.tags.join(', ') : '—'}</dd>
          {lead.fields.map((f) => (
            <Fragment key={f.key}>
              <dt>{f.key}</dt>
              <dd>{f.value}</dd>
            </Fragment>
          ))}
        </dl>
      </div>
      <div className="card">
        <h2>Contacts</h2>
        {lead.contacts.length ? (
          <ul className="plain-list">
            {lead.contacts.map((c, i) => (
              <li key={c.email ?? i}>
                {c.name ? `${c.name} · ` : ''}
                {c.email ?? '—'}
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
