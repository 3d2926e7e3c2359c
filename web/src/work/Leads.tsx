import { useCallback, useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { Link } from '../router';
import { FormError, formatDate, Loading, PageHeader } from '../ui';
import { type Column, DataTable } from '../DataTable';
import { Tags } from './LeadTable';

export interface Lead {
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
export interface LeadDetail extends Lead {
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

const LEAD_COLUMNS: Column<Lead>[] = [
  {
    header: 'Company',
    cell: (l) => (
      <>
        <Link to={`/leads/${encodeURIComponent(l.id)}`}>{l.companyName ?? l.domain}</Link>
        {l.companyName ? <span className="muted small"> {l.domain}</span> : null}
      </>
    ),
  },
  { header: 'Status', cell: (l) => <span className="badge">{l.status}</span> },
  { header: 'Contact', cell: (l) => l.contact?.email ?? '—' },
  { header: 'Tags', cell: (l) => <Tags tags={l.tags} /> },
  { header: 'Added', cell: (l) => formatDate(l.createdAt) },
];

/** Characters a search needs before the server is asked (its trigram indexes need three). */
const SEARCH_MIN = 3;

/**
 * Leads: a status filter (the server's), a search over all the account's leads (`GET /dashboard/api/leads`, asked
 * once typing pauses), and cursor paging of either.
 */
export function Leads() {
  const id = useId();
  const [status, setStatus] = useState('');
  const [search, setSearch] = useState('');
  const [needle, setNeedle] = useState('');
  const [leads, setLeads] = useState<Lead[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // The search is asked 300 ms after typing stops, and only with enough characters; fewer show every lead.
  useEffect(() => {
    const t = window.setTimeout(() => setNeedle([...search.trim()].length >= SEARCH_MIN ? search.trim() : ''), 300);
    return () => window.clearTimeout(t);
  }, [search]);

  const load = useCallback(async (st: string, q: string, after: string | null) => {
    setBusy(true);
    try {
      const query = new URLSearchParams({ limit: '50' });
      if (st) query.set('status', st);
      if (q) query.set('q', q);
      if (after) query.set('cursor', after);
      const page = await api<{ leads: Lead[]; nextCursor: string | null }>('GET', q ? `/leads?${query}` : `/v1/leads?${query}`);
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
    void load(status, needle, null);
  }, [status, needle, load]);

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
            Searches all your leads: domain, company, a contact&apos;s address or name ({SEARCH_MIN} characters at least).
          </p>
        </div>
      </div>
      <FormError error={error} />
      {leads === null ? <Loading /> : null}
      <p className="visually-hidden" role="status">
        {leads && !busy ? `${leads.length}${cursor ? ' or more' : ''} leads${needle ? ` match “${needle}”` : ''}.` : ''}
      </p>
      {leads && leads.length === 0 ? <p className="muted">No leads match.</p> : null}
      {leads?.length ? <DataTable columns={LEAD_COLUMNS} rows={leads} rowKey={(l) => l.id} /> : null}
      {cursor ? (
        <p>
          <button type="button" className="button secondary" disabled={busy} onClick={() => load(status, needle, cursor)}>
            Load more
          </button>
        </p>
      ) : null}
    </section>
  );
}
