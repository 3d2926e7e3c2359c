import { type FormEvent, useEffect, useId, useState } from 'react';
import { api, errorText } from '../api';
import { Field, FormError, useAction } from '../ui';

export interface Step {
  id: string;
  title: string;
  details: string;
  gate?: { on: true; label?: string };
}

export interface Workflow {
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

interface Preview {
  echo: string | null;
  error: string | null;
  timeZone: string;
  nextRuns: number[];
}

/** What a create or an edit sends: the contract's fields (an edit also `status`). */
export interface WorkflowBody {
  name: string;
  scheduleText: string;
  description?: string | null;
  steps: { id?: string; title: string; details?: string; gate?: Step['gate'] }[];
  status?: 'live' | 'paused';
}

/** A coming run in the account's time zone, the zone the schedule is read in (the echo names it too). */
export const inZone = (t: number, timeZone: string) =>
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
 * The steps as the form sends them: one a line. A line that still reads as one of the workflow's steps is sent
 * back with its id, details and gate (the contract keeps that step's run history); a new or changed line is a
 * new step.
 */
function stepsOf(text: string, kept: readonly Step[]): WorkflowBody['steps'] {
  const unused = [...kept];
  return text
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((title) => {
      const at = unused.findIndex((s) => s.title === title);
      if (at === -1) return { title };
      const [step] = unused.splice(at, 1);
      return { id: step!.id, title, details: step!.details, ...(step!.gate ? { gate: step!.gate } : {}) };
    });
}

/**
 * The create and edit form of a workflow: name, the schedule in plain words read by the server while it is typed
 * (GET /dashboard/api/workflows/schedule-preview, the workflows service's own parser) with the next five runs shown
 * before saving, a description, the steps one a line; an edit also sets the status. `onSubmit` saves; a create
 * form is emptied after it, an edit is closed by its page.
 */
export function WorkflowForm({
  title,
  submitLabel,
  workflow,
  onSubmit,
  onCancel,
}: {
  title: string;
  submitLabel: string;
  workflow?: Workflow;
  onSubmit: (body: WorkflowBody) => Promise<void>;
  onCancel?: () => void;
}) {
  const id = useId();
  const [name, setName] = useState(workflow?.name ?? '');
  const [scheduleText, setScheduleText] = useState(workflow?.scheduleText ?? '');
  const [description, setDescription] = useState(workflow?.description ?? '');
  const [steps, setSteps] = useState(workflow?.steps.map((s) => s.title).join('\n') ?? '');
  const [status, setStatus] = useState<'live' | 'paused'>(workflow?.status ?? 'live');
  const [preview, setPreview] = useState<Preview | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const save = useAction();

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
    void save.run(async () => {
      const body: WorkflowBody = { name, scheduleText, steps: stepsOf(steps, workflow?.steps ?? []) };
      if (workflow) Object.assign(body, { description: description.trim() ? description : null, status });
      else if (description.trim()) body.description = description;
      await onSubmit(body);
      if (!workflow) {
        setName('');
        setScheduleText('');
        setDescription('');
        setSteps('');
      }
    });
  };

  return (
    <form className={workflow ? 'workflow-edit' : 'card'} onSubmit={submit} noValidate aria-labelledby={`${id}-h`}>
      {workflow ? <h4 id={`${id}-h`}>{title}</h4> : <h2 id={`${id}-h`}>{title}</h2>}
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
          1 to 25 steps, each a short instruction to the agent.{workflow ? ' A step kept word for word keeps its run history.' : ''}
        </p>
      </div>
      {workflow ? (
        <div className="field">
          <label htmlFor={`${id}-status`}>Status</label>
          <select id={`${id}-status`} value={status} onChange={(e) => setStatus(e.target.value as 'live' | 'paused')}>
            <option value="live">Live: runs on its schedule</option>
            <option value="paused">Paused: does not run</option>
          </select>
        </div>
      ) : null}
      <FormError error={save.error} />
      <div className="actions">
        <button type="submit" className="button primary" disabled={save.busy}>
          {submitLabel}
        </button>
        {onCancel ? (
          <button type="button" className="button secondary" onClick={onCancel}>
            Cancel
          </button>
        ) : null}
      </div>
    </form>
  );
}
