import { type FormEvent, useCallback, useEffect, useId, useState } from 'react';
import { api, errorText, upload } from '../api';
import { FormError, formatDate, Loading, Notice, PageHeader } from '../ui';
import { LeadsNav } from './Leads';
import { type Column, DataTable } from '../DataTable';

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

const PREVIEW_COLUMNS: Column<PreviewRow>[] = [
  { header: 'Line', cell: (r) => r.line },
  { header: 'Email', cell: (r) => r.contact?.email ?? '—' },
  { header: 'Domain', cell: (r) => r.contact?.domain ?? '—' },
  {
    header: 'Problem',
    cell: (r) => (r.problem ? `${r.problem.kind === 'duplicate' ? 'Duplicate' : 'Refused'}: ${r.problem.reason}` : 'OK'),
  },
];

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
          <DataTable columns={PREVIEW_COLUMNS} rows={preview} rowKey={(r) => String(r.line)} />
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

const BLOCK_COLUMNS: Column<BlockEntry>[] = [
  { header: 'Value', cell: (b) => b.value },
  { header: 'Kind', cell: (b) => b.kind },
  { header: 'Source', cell: (b) => b.source.replace(/_/g, ' ') },
  { header: 'Reason', cell: (b) => b.reason ?? '—' },
  { header: 'Added', cell: (b) => formatDate(b.addedAt) },
];

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
      const unread = res.invalid.length ? ` Not a domain, address or profile URL: ${res.invalid.join(', ')}.` : '';
      setResult(`Added ${res.added}; ${res.existing} already listed.${unread}`);
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
      {entries?.length ? <DataTable columns={BLOCK_COLUMNS} rows={entries} rowKey={(b) => b.id} /> : null}
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
