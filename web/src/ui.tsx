import { type InputHTMLAttributes, type ReactNode, useCallback, useEffect, useId, useRef, useState } from 'react';
import { errorText } from './api';

/** A labelled input: every input has its label, and a hint is tied to it by aria-describedby. */
export function Field({ label, hint, ...input }: InputHTMLAttributes<HTMLInputElement> & { label: string; hint?: ReactNode }) {
  const id = useId();
  const hintId = `${id}-hint`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input id={id} aria-describedby={hint ? hintId : undefined} {...input} />
      {hint ? (
        <p className="hint" id={hintId}>
          {hint}
        </p>
      ) : null}
    </div>
  );
}

/** The server's `{ error }` sentence next to the form that caused it, announced to screen readers. */
export function FormError({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p className="form-error" role="alert">
      {error}
    </p>
  );
}

export function Notice({ children }: { children: ReactNode }) {
  return (
    <p className="notice" role="status">
      {children}
    </p>
  );
}

export function PageHeader({ title, children }: { title: string; children?: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  // A new page moves focus to its heading, so keyboard and screen-reader users land on it.
  useEffect(() => ref.current?.focus(), []);
  return (
    <header className="page-header">
      <h1 tabIndex={-1} ref={ref}>
        {title}
      </h1>
      {children ? <p className="lede">{children}</p> : null}
    </header>
  );
}

async function copyText(text: string, fallback: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    // Plain http (no secure context) has no clipboard API: select the text and use the old command.
    if (!fallback) return false;
    fallback.select();
    return document.execCommand('copy');
  }
}

/** A secret or record shown in a read-only box with a Copy button. */
export function CopyField({ label, value, hint }: { label: string; value: string; hint?: ReactNode }) {
  const id = useId();
  const ref = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<'yes' | 'no' | null>(null);
  return (
    <div className="field copy-field">
      <label htmlFor={id}>{label}</label>
      <div className="copy-row">
        <input id={id} ref={ref} readOnly value={value} className="mono" onFocus={(e) => e.currentTarget.select()} />
        <button
          type="button"
          className="button secondary"
          onClick={async () => setCopied((await copyText(value, ref.current)) ? 'yes' : 'no')}
        >
          Copy
        </button>
      </div>
      <p className="hint" aria-live="polite">
        {copied === 'yes' ? 'Copied.' : copied === 'no' ? 'Select the text and copy it yourself.' : hint}
      </p>
    </div>
  );
}

/** Loads data for a page: the value, the error sentence, and a reload; a new `key` loads again. */
export function useLoad<T>(load: () => Promise<T>, key = '') {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const latest = useRef(load);
  latest.current = load;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names what the load depends on
  const reload = useCallback(async () => {
    setLoading(true);
    try {
      setData(await latest.current());
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoading(false);
    }
  }, [key]);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { data, error, loading, reload, setData };
}

/** Runs a form's action: busy while it runs, the server's sentence on failure. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async (fn: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, setError, run };
}

/** A time the server sent (ISO text or epoch milliseconds) in the reader's locale. */
export function formatDate(when: string | number | null | undefined): string {
  if (when === null || when === undefined || when === '') return '—';
  const d = new Date(when);
  if (Number.isNaN(d.getTime())) return String(when);
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}
