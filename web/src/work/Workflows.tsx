import { useState } from 'react';
import { api } from '../api';
import { ConfirmButton } from '../Confirm';
import { FormError, formatDate, Loading, Notice, PageHeader, useAction, useLoad } from '../ui';
import { type Workflow, type WorkflowBody, WorkflowForm } from './WorkflowForm';

interface Run {
  runId: string;
  status: string;
  scheduledFor: number;
  startedAt: number;
  finishedAt: number | null;
  summary: string | null;
  steps: { stepId: string; title: string; outcome: string; reason?: string; at?: number }[];
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

/**
 * Workflows: the /api/v1 workflows routes under the dashboard, acting as the person. The schedule is read by
 * the server (GET /dashboard/api/workflows/schedule-preview, the workflows service's own parser) while it is
 * typed, with the next five runs shown before saving, when creating one and when editing one (PATCH). Delete
 * is asked twice in place.
 */
export function Workflows() {
  const list = useLoad(() => api<{ workflows: Workflow[] }>('GET', '/v1/workflows'));
  const act = useAction();
  const [open, setOpen] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const replace = (workflow: Workflow) =>
    list.setData((d) => (d ? { workflows: d.workflows.map((x) => (x.workflowId === workflow.workflowId ? workflow : x)) } : d));

  const edit = async (w: Workflow, body: WorkflowBody) => {
    const { workflow } = await api<{ workflow: Workflow }>('PATCH', `/v1/workflows/${encodeURIComponent(w.workflowId)}`, body);
    replace(workflow);
    setEditing(null);
    setDone(
      workflow.status === 'paused'
        ? `“${workflow.name}” is saved; it is paused.`
        : `“${workflow.name}” is saved; next run ${workflow.nextRunAt ? formatDate(workflow.nextRunAt) : 'not set'}.`,
    );
  };
  const remove = (w: Workflow) =>
    act.run(async () => {
      await api('DELETE', `/v1/workflows/${encodeURIComponent(w.workflowId)}`);
      list.setData((d) => (d ? { workflows: d.workflows.filter((x) => x.workflowId !== w.workflowId) } : d));
      setDone(`“${w.name}” is deleted.`);
    });

  const verb = (w: Workflow, which: 'pause' | 'resume') =>
    act.run(async () => {
      const { workflow } = await api<{ workflow: Workflow }>('POST', `/v1/workflows/${encodeURIComponent(w.workflowId)}/${which}`);
      replace(workflow);
      setDone(which === 'pause' ? `“${w.name}” is paused; it will not run until resumed.` : `“${w.name}” is live again.`);
    });

  return (
    <section>
      <PageHeader title="Workflows">Work the agent does on a schedule, step by step, and what each run did.</PageHeader>
      <WorkflowForm
        title="New workflow"
        submitLabel="Create workflow"
        onSubmit={async (body) => {
          const { workflow } = await api<{ workflow: Workflow }>('POST', '/v1/workflows', body);
          list.setData((d) => ({ workflows: [workflow, ...(d?.workflows ?? [])] }));
          setDone(`“${workflow.name}” is live.`);
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
                  <button
                    type="button"
                    className="button secondary"
                    aria-expanded={editing === w.workflowId}
                    onClick={() => setEditing(editing === w.workflowId ? null : w.workflowId)}
                  >
                    Edit<span className="visually-hidden"> {w.name}</span>
                  </button>
                  <ConfirmButton
                    label="Delete"
                    confirmLabel={`Delete “${w.name}”`}
                    question={`Delete “${w.name}”? It stops running and its runs are no longer shown.`}
                    onConfirm={() => remove(w)}
                    disabled={act.busy}
                  />
                </div>
              </div>
              {editing === w.workflowId ? (
                <WorkflowForm
                  key={w.version}
                  title={`Edit ${w.name}`}
                  submitLabel="Save changes"
                  workflow={w}
                  onSubmit={(body) => edit(w, body)}
                  onCancel={() => setEditing(null)}
                />
              ) : null}
              {open === w.workflowId ? <Runs workflow={w} /> : null}
            </li>
          ))}
        </ul>
      </div>
    </section>
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
