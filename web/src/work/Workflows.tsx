import { type FormEvent, useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { Field, FormError, formatDate, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';

interface Step {
  id: string;
  title: string;
  details: string;
  gate?: { on: true; label?: string };
}

interface Workflow {
  workflowId: string;
  name: string;
  description: string | null;
  status: 'live' | 'paused';
  scheduleText: string;
  scheduleEcho: string | null;
  scheduleError: string | null;
  nextRunAt: number | null;
  version: number;
  steps: Step[];
}

interface Run {
  runId: string;
  status: string;
  scheduledFor: number;
  startedAt: number;
  finishedAt: number | null;
  summary: string | null;
  steps: { stepId: string; title: string; outcome: string; reason?: string; at?: number }[];
}

interface Preview {
  echo: string | null;
  error: string | null;
  timeZone: string;
  nextRuns: number[];
}

const OUTCOME: Record<string, string> = {
  pending: 'Pending',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
  skipped: 'Skipped',
  waiting_for_gate: 'Waiting for an ok',
};

const RUN_STATUS: Record<string, string> = {
  running: 'Running',
  waiting: 'Waiting',
  done: 'Done',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

/** A coming run in the account's time zone, the zone the schedule is read in (the echo names it too). */
const inZone = (t: number, timeZone: string) =>
  new Date(t).toLocaleString(undefined, {
    timeZone,
    weekday: 'short',
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
  });

/** Waits this long after the last key before asking the server to read the schedule. */
const PREVIEW_DELAY_MS = 400;

/**
 * Workflows: the /api/v1 workflows routes under the dashboard, acting as the person. The schedule is read by
 * the server (GET /dashboard/api/workflows/schedule-preview, the workflows service's own parser) while it is
 * typed, with the next five runs shown before saving.
 */
export function Workflows() {
  const list = useLoad(() => api<{ workflows: Workflow[] }>('GET', '/v1/workflows'));
  const act = useAction();
  const [open, setOpen] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const verb = (w: Workflow, which: 'pause' | 'resume') =>
    act.run(async () => {
      const { workflow } = await api<{ workflow: Workflow }>('POST', `/v1/workflows/${encodeURIComponent(w.workflowId)}/${which}`);
      list.setData((d) => (d ? { workflows: d.workflows.map((x) => (x.workflowId === workflow.workflowId ? workflow : x)) } : d));
      setDone(which === 'pause' ? `“${w.name}” is paused; it will not run until resumed.` : `“${w.name}” is live again.`);
    });

  return (
    <section>
      <PageHeader title="Workflows">Work the agent does on a schedule, step by step, and what each run did.</PageHeader>
      <NewWorkflow
        onCreated={(w) => {
          list.setData((d) => ({ workflows: [w, ...(d?.workflows ?? [])] }));
          setDone(`“${w.name}” is live.`);
        }}
      />
      <div className="card">
        <h2>The account's workflows</h2>
        {done ? <Notice>{done}</Notice> : null}
        <FormError error={list.error ?? act.error} />
        {list.loading && !list.data ? <Loading /> : null}
        {list.data && list.data.workflows.length === 0 ? <p className="muted">No workflows yet.</p> : null}
        <ul className="hook-list">
          {list.data?.workflows.map((w) => (
            <li key={w.workflowId} className="hook workflow">
              <div className="hook-head">
                <div>
                  <h3>{w.name}</h3>
                  <p className="muted small">
                    <span className={w.status === 'live' ? 'badge ok' : 'badge'}>{w.status === 'live' ? 'Live' : 'Paused'}</span> “
                    {w.scheduleText}” · {w.scheduleEcho ?? `Not understood: ${w.scheduleError ?? 'no schedule'}`}
                    {w.nextRunAt ? ` · Next run ${formatDate(w.nextRunAt)}` : ''}
                  </p>
                  {w.description ? <p className="small">{w.description}</p> : null}
                  <ol className="small">
                    {w.steps.map((s) => (
                      <li key={s.id}>
                        {s.title}
                        {s.gate ? <span className="muted"> (waits for an ok)</span> : null}
                      </li>
                    ))}
                  </ol>
                </div>
                <div className="row-actions">
                  <button
                    type="button"
                    className="button secondary"
                    aria-expanded={open === w.workflowId}
                    onClick={() => setOpen(open === w.workflowId ? null : w.workflowId)}
                  >
                    Runs<span className="visually-hidden"> of {w.name}</span>
                  </button>
                  <button
                    type="button"
                    className="button secondary"
                    disabled={act.busy}
                    onClick={() => verb(w, w.status === 'live' ? 'pause' : 'resume')}
                  >
                    {w.status === 'live' ? 'Pause' : 'Resume'}
                    <span className="visually-hidden"> {w.name}</span>
                  </button>
                </div>
              </div>
              {open === w.workflowId ? <Runs workflow={w} /> : null}
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}

/** The create form: the schedule read as it is typed, the next five runs shown before saving. */
function NewWorkflow({ onCreated }: { onCreated: (w: Workflow) => void }) {
  const id = useId();
  const [name, setName] = useState('');
  const [scheduleText, setScheduleText] = useState('');
  const [description, setDescription] = useState('');
  const [steps, setSteps] = useState('');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const create = useAction();

  useEffect(() => {
    const text = scheduleText.trim();
    setPreview(null);
    setPreviewError(null);
    if (!text) return;
    let stale = false;
    const timer = setTimeout(() => {
      api<Preview>('GET', `/workflows/schedule-preview?text=${encodeURIComponent(text)}`).then(
        (p) => !stale && setPreview(p),
        (err: unknown) => !stale && setPreviewError(errorText(err)),
      );
    }, PREVIEW_DELAY_MS);
    return () => {
      stale = true;
      clearTimeout(timer);
    };
  }, [scheduleText]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    void create.run(async () => {
      const body = {
        name,
        scheduleText,
        steps: steps
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((title) => ({ title })),
        ...(description.trim() ? { description } : {}),
      };
      const { workflow } = await api<{ workflow: Workflow }>('POST', '/v1/workflows', body);
      onCreated(workflow);
      setName('');
      setScheduleText('');
      setDescription('');
      setSteps('');
    });
  };

  return (
    <form className="card" onSubmit={submit} noValidate aria-labelledby={`${id}-h`}>
      <h2 id={`${id}-h`}>New workflow</h2>
      <Field label="Name" value={name} onChange={(e) => setName(e.target.value)} maxLength={120} required />
      <Field
        label="Schedule"
        value={scheduleText}
        onChange={(e) => setScheduleText(e.target.value)}
        maxLength={200}
        hint="In plain words: “every weekday at 9am”, “Mondays at 8:30”, “every 2 hours”."
        required
      />
      <div aria-live="polite" className="schedule-preview">
        <FormError error={previewError} />
        {preview?.error ? <p className="form-error">Not understood: {preview.error}</p> : null}
        {preview?.echo ? (
          <>
            <p className="small">
              Read as: <strong>{preview.echo}</strong>
            </p>
            <p className="small" id={`${id}-next`}>
              The next five runs ({preview.timeZone}):
            </p>
            <ol className="small next-runs" aria-labelledby={`${id}-next`}>
              {preview.nextRuns.map((t) => (
                <li key={t}>{inZone(t, preview.timeZone)}</li>
              ))}
            </ol>
          </>
        ) : null}
      </div>
      <Field label="Description (optional)" value={description} onChange={(e) => setDescription(e.target.value)} maxLength={240} />
      <div className="field">
        <label htmlFor={`${id}-steps`}>Steps, one a line</label>
        <textarea
          id={`${id}-steps`}
          rows={4}
          value={steps}
          onChange={(e) => setSteps(e.target.value)}
          aria-describedby={`${id}-steps-hint`}
        />
        <p className="hint" id={`${id}-steps-hint`}>
          1 to 25 steps, each a short instruction to the agent.
        </p>
      </div>
      <FormError error={create.error} />
      <div className="actions">
        <button type="submit" className="button primary" disabled={create.busy}>
          Create workflow
        </button>
      </div>
    </form>
  );
}

/** A workflow's runs, newest first, each with its steps' outcomes. */
function Runs({ workflow }: { workflow: Workflow }) {
  const runs = useLoad(
    () => api<{ runs: Run[] }>('GET', `/v1/workflows/${encodeURIComponent(workflow.workflowId)}/runs?limit=10`),
    `${workflow.workflowId}:${workflow.version}`,
  );
  return (
    <div className="deliveries">
      <h4>Runs of {workflow.name}</h4>
      <FormError error={runs.error} />
      {runs.loading && !runs.data ? <Loading /> : null}
      {runs.data && runs.data.runs.length === 0 ? <p className="muted small">No runs yet.</p> : null}
      <ul className="delivery-list">
        {runs.data?.runs.map((r) => (
          <li key={r.runId} className="delivery">
            <p className="small">
              <span className={r.status === 'done' ? 'badge ok' : r.status === 'failed' ? 'badge warn' : 'badge'}>
                {RUN_STATUS[r.status] ?? r.status}
              </span>{' '}
              Due {formatDate(r.scheduledFor)} · started {formatDate(r.startedAt)}
              {r.finishedAt ? ` · finished ${formatDate(r.finishedAt)}` : ''}
            </p>
            {r.summary ? <p className="small">{r.summary}</p> : null}
            <ol className="small">
              {r.steps.map((s) => (
                <li key={s.stepId}>
                  {s.title}: <strong>{OUTCOME[s.outcome] ?? s.outcome}</strong>
                  {s.reason ? <span className="muted"> — {s.reason}</span> : null}
                </li>
              ))}
            </ol>
          </li>
        ))}
      </ul>
    </div>
  );
}
