import { type FormEvent, Fragment, useCallback, useEffect, useId, useState } from 'react';
import { api, errorText, upload } from '../api';
import { Link } from '../router';
import { FormError, formatDate, Loading, Notice, PageHeader } from '../ui';

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

function LeadsNav() {
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

interface PreviewRow {
  line: number;
  contact: { email: string | null; domain: string; name?: string | null; company?: string | null } | null;
  problem: { kind: 'rejected' | 'duplicate'; reason: string } | null;
}
interface ImportState {
  id: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  processed: number;
  total: number | null;
  imported: number;
  duplicates: number;
  rejected: { line: number; reason: string }[];
  duplicateRows: { line: number; reason: string }[];
  error: string | null;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const csvType = (f: File) =>
  f.type && ['text/csv', 'application/csv', 'text/plain', 'application/vnd.ms-excel'].includes(f.type) ? f.type : 'text/csv';

/** Import a CSV: pick the file, the mapping, a preview with each row's problem, then the import's progress. */
export function LeadImport() {
  const id = useId();
  const [file, setFile] = useState<File | null>(null);
  const [map, setMap] = useState('');
  const [preview, setPreview] = useState<PreviewRow[] | null>(null);
  const [job, setJob] = useState<ImportState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const query = (more: Record<string, string>) => {
    const q = new URLSearchParams(more);
    if (map.trim()) q.set('map', map.trim());
    return q.toString();
  };

  const doPreview = async (e: FormEvent) => {
    e.preventDefault();
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      setPreview(
        (await upload<{ rows: PreviewRow[] }>(`/leads/imports?${query({ preview: 'true', limit: '20' })}`, file, csvType(file))).rows,
      );
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  const doImport = async () => {
    if (!file) return;
    setBusy(true);
    setError(null);
    try {
      const res = await upload<{ import: ImportState }>(`/leads/imports?${query({})}`, file, csvType(file));
      setJob(res.import);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };
  // Progress: the import's row, read once a second until it is done or failed (at most an hour).
  useEffect(() => {
    if (!job || job.state === 'done' || job.state === 'failed') return;
    let n = 0;
    const t = window.setInterval(async () => {
      if (++n > 3600) return window.clearInterval(t);
      try {
        const res = await api<{ import: ImportState }>('GET', `/leads/imports/${encodeURIComponent(job.id)}`);
        setJob(res.import);
      } catch (err) {
        setError(errorText(err));
      }
    }, 1000);
    return () => window.clearInterval(t);
  }, [job]);

  const bad = (preview ?? []).filter((r) => r.problem);
  return (
    <section>
      <PageHeader title="Import leads">A CSV of contacts: a header line, then one contact a line.</PageHeader>
      <LeadsNav />
      <form className="card" onSubmit={doPreview}>
        <div className="field">
          <label htmlFor={`${id}-file`}>CSV file</label>
          <input
            id={`${id}-file`}
            type="file"
            accept=".csv,text/csv"
            onChange={(e) => {
              setFile(e.target.files?.[0] ?? null);
              setPreview(null);
              setJob(null);
            }}
          />
        </div>
        <div className="field">
          <label htmlFor={`${id}-map`}>Mapping (optional)</label>
          <input
            id={`${id}-map`}
            value={map}
            placeholder="email=Email,name=Full name,domain=Website"
            onChange={(e) => setMap(e.target.value)}
            aria-describedby={`${id}-map-hint`}
          />
          <p className="hint" id={`${id}-map-hint`}>
            Which column holds which field: email, name, company, domain, vertical, archetype, tags. Without one, columns named like a field
            are read.
          </p>
        </div>
        <div className="actions">
          <button type="submit" className="button secondary" disabled={!file || busy}>
            Preview
          </button>
          <button type="button" className="button primary" disabled={!file || busy || !preview} onClick={doImport}>
            Import
          </button>
        </div>
        <FormError error={error} />
      </form>
      {preview ? (
        <div className="card">
          <h2>Preview (first {preview.length} rows)</h2>
          <p>{bad.length ? `${bad.length} of these rows will not be imported.` : 'Every row shown can be imported.'}</p>
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Email</th>
                  <th scope="col">Domain</th>
                  <th scope="col">Problem</th>
                </tr>
              </thead>
              <tbody>
                {preview.map((r) => (
                  <tr key={r.line}>
                    <td>{r.line}</td>
                    <td>{r.contact?.email ?? '—'}</td>
                    <td>{r.contact?.domain ?? '—'}</td>
                    <td>{r.problem ? `${r.problem.kind === 'duplicate' ? 'Duplicate' : 'Refused'}: ${r.problem.reason}` : 'OK'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      ) : null}
      {job ? (
        <div className="card" aria-live="polite">
          <h2>Import</h2>
          {job.state === 'queued' || job.state === 'running' ? (
            <>
              <p role="status">
                {job.state === 'queued' ? 'Waiting to start…' : `Importing: ${job.processed} of ${job.total ?? '?'} rows read.`}
              </p>
              <progress max={job.total ?? 1} value={job.total ? job.processed : undefined} aria-label="Import progress" />
            </>
          ) : null}
          {job.state === 'failed' ? <p className="form-error">The import failed: {job.error}. Nothing was imported.</p> : null}
          {job.state === 'done' ? (
            <>
              <Notice>
                Imported {plural(job.imported, 'contact')}; {plural(job.duplicates, 'duplicate')} and{' '}
                {plural(job.rejected.length, 'refused row')} left out.
              </Notice>
              {job.rejected.length || job.duplicateRows.length ? (
                <ul className="plain-list">
                  {[...job.rejected.map((r) => ({ ...r, kind: 'Refused' })), ...job.duplicateRows.map((r) => ({ ...r, kind: 'Duplicate' }))]
                    .sort((a, b) => a.line - b.line)
                    .map((r) => (
                      <li key={`${r.kind}-${r.line}`}>
                        Line {r.line}: {r.kind.toLowerCase()}, {r.reason}
                      </li>
                    ))}
                </ul>
              ) : null}
            </>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

interface BlockEntry {
  id: string;
  kind: string;
  value: string;
  reason: string | null;
  source: string;
  addedAt: number;
}

/** The block list: newest first with cursor paging, and an add form (one value a line). */
export function Blocklist() {
  const id = useId();
  const [entries, setEntries] = useState<BlockEntry[] | null>(null);
  const [cursor, setCursor] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [result, setResult] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(async (after: string | null) => {
    try {
      const page = await api<{ entries: BlockEntry[]; nextCursor: string | null }>(
        'GET',
        `/v1/blocklist?limit=50${after ? `&cursor=${encodeURIComponent(after)}` : ''}`,
      );
      setEntries((es) => (after && es ? [...es, ...page.entries] : page.entries));
      setCursor(page.nextCursor);
    } catch (err) {
      setError(errorText(err));
    }
  }, []);
  useEffect(() => {
    void load(null);
  }, [load]);
  const add = async (e: FormEvent) => {
    e.preventDefault();
    setError(null);
    try {
      const values = text
        .split('\n')
        .map((v) => v.trim())
        .filter(Boolean);
      const res = await api<{ added: number; existing: number; invalid: string[] }>('POST', '/v1/blocklist', { entries: values });
      setResult(
        `Added ${res.added}; ${res.existing} already listed.${res.invalid.length ? ` Not a domain, address or profile URL: ${res.invalid.join(', ')}.` : ''}`,
      );
      setText('');
      await load(null);
    } catch (err) {
      setError(errorText(err));
    }
  };
  return (
    <section>
      <PageHeader title="Block list">Domains, addresses and profiles the agent never contacts.</PageHeader>
      <LeadsNav />
      <form className="card" onSubmit={add}>
        <div className="field">
          <label htmlFor={`${id}-values`}>Block (one domain, address or profile URL a line)</label>
          <textarea id={`${id}-values`} rows={3} value={text} required onChange={(e) => setText(e.target.value)} />
        </div>
        <div className="actions">
          <button type="submit" className="button primary">
            Add to the block list
          </button>
        </div>
        {result ? <Notice>{result}</Notice> : null}
        <FormError error={error} />
      </form>
      {entries === null ? <Loading /> : null}
      {entries && entries.length === 0 ? <p className="muted">Nothing is blocked.</p> : null}
      {entries?.length ? (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Value</th>
                <th scope="col">Kind</th>
                <th scope="col">Source</th>
                <th scope="col">Reason</th>
                <th scope="col">Added</th>
              </tr>
            </thead>
            <tbody>
              {entries.map((b) => (
                <tr key={b.id}>
                  <th scope="row">{b.value}</th>
                  <td>{b.kind}</td>
                  <td>{b.source.replace(/_/g, ' ')}</td>
                  <td>{b.reason ?? '—'}</td>
                  <td>{formatDate(b.addedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {cursor ? (
        <p>
          <button type="button" className="button secondary" onClick={() => load(cursor)}>
            Load more
          </button>
        </p>
      ) : null}
    </section>
  );
}
