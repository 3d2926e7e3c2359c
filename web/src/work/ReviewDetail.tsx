import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { FormError, formatDate } from '../ui';
import { durationWords, mailDocument, primaryVerb, type ReviewCard, snoozeChoices } from './review-model';

export type Verb = 'request_changes' | 'snooze' | 'dismiss' | 'answer' | 'choose';

export function ladderWords(at: number, now: number, short = false): string {
  const left = at - now;
  if (left <= 0) return short ? 'Approving itself now' : 'The trust ladder approves it any moment now unless someone acts.';
  return short
    ? `Approves itself in ${durationWords(left)}`
    : `The trust ladder approves it in ${durationWords(left)} unless someone acts first.`;
}

export function HelpSheet({ onClose }: { onClose: () => void }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const keys: [string, string][] = [
    ['j / k', 'Next / previous card'],
    ['Enter', 'Open the card'],
    ['e or Shift+Enter', 'The card’s main action (its first button)'],
    ['r', 'Request changes'],
    ['s', 'Snooze'],
    ['d', 'Dismiss'],
    ['Escape', 'Close the form, the card or this sheet'],
    ['?', 'Show or hide this sheet'],
  ];
  return (
    <div className="card help-sheet" role="dialog" aria-label="Keyboard shortcuts" tabIndex={-1} ref={ref}>
      <h2>Keyboard shortcuts</h2>
      <dl className="keys">
        {keys.map(([k, what]) => (
          <div key={k}>
            <dt>
              <kbd>{k}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <button type="button" className="button secondary" onClick={onClose}>
        Close
      </button>
    </div>
  );
}

interface DetailProps {
  card: ReviewCard;
  now: number;
  form: Verb | null;
  setForm: (f: Verb | null) => void;
  act: (card: ReviewCard, verb: string, body: Record<string, unknown>, path: string) => Promise<string | null>;
  onPrimary: () => Promise<string | null>;
  onClose: () => void;
}

const VERB_LABELS: Record<string, string> = {
  request_changes: 'Request changes',
  snooze: 'Snooze',
  dismiss: 'Dismiss',
  approve: 'Approve',
  answer: 'Answer',
  choose: 'Choose',
  send: 'Send',
};

export function CardDetail({ card, now, form, setForm, act, onPrimary, onClose }: DetailProps) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  // Focus to the card's heading when it opens, unless a verb's key opened it with its form (d, s, r): the form's
  // first field has the focus then, so the keys go on (d Tab Enter dismisses).
  const openedWithForm = useRef(form !== null);
  useEffect(() => {
    if (!openedWithForm.current) headingRef.current?.focus();
  }, []);
  const verb = primaryVerb(card);
  const draft = (card.payload.draft ?? null) as { subject?: string; body?: string; html?: string } | null;
  const to = typeof card.payload.to === 'string' ? card.payload.to : null;
  const run = async (fn: () => Promise<string | null>) => {
    setBusy(true);
    setError(null);
    try {
      setError(await fn());
    } finally {
      setBusy(false);
    }
  };
  // The other verbs, each a button opening its input (approve beside answer on a question card).
  const others = card.actions.filter((a) => a !== verb);

  return (
    <article className="card card-detail" aria-labelledby={`card-${card.id}`}>
      <header className="detail-head">
        <h2 id={`card-${card.id}`} tabIndex={-1} ref={headingRef}>
          {card.title}
        </h2>
        <button type="button" className="button secondary small-button" onClick={onClose}>
          Close
        </button>
      </header>
      {card.prompt ? <p>{card.prompt}</p> : null}
      {card.summary ? <p className="muted">{card.summary}</p> : null}
      {card.autoResolveAt ? <p className="notice warn-notice">{ladderWords(card.autoResolveAt, now)}</p> : null}
      {card.status === 'needs_revision' ? (
        <p className="notice">The agent is revising this card; the new version comes back to the queue.</p>
      ) : null}
      <dl className="card-facts">
        {to ? (
          <div>
            <dt>To</dt>
            <dd>{to}</dd>
          </div>
        ) : null}
        <div>
          <dt>Filed</dt>
          <dd>{formatDate(card.createdAt)}</dd>
        </div>
        {card.dueAt ? (
          <div>
            <dt>Due</dt>
            <dd>{formatDate(card.dueAt)}</dd>
          </div>
        ) : null}
        <div>
          <dt>Priority</dt>
          <dd>{card.priority}</dd>
        </div>
      </dl>
      {card.budgetChange ? <BudgetChange change={card.budgetChange} /> : null}
      {draft && (draft.body || draft.html) ? (
        <iframe className="mail-frame" title={`The mail: ${draft.subject ?? card.title}`} sandbox="" srcDoc={mailDocument(draft)} />
      ) : null}

      <div className="actions detail-actions">
        {verb ? (
          <button type="button" className="button primary" disabled={busy} onClick={() => run(onPrimary)}>
            {card.primaryLabel}
          </button>
        ) : null}
        {others.map((a) => (
          <button
            key={a}
            type="button"
            className={a === 'dismiss' ? 'button danger-quiet' : 'button secondary'}
            disabled={busy}
            aria-expanded={form === a}
            onClick={() => {
              if (a === 'approve') void run(() => act(card, 'approve', { action: 'approve' }, 'answer'));
              else setForm(form === a ? null : (a as Verb));
            }}
          >
            {VERB_LABELS[a] ?? a}
          </button>
        ))}
      </div>
      <FormError error={error} />
      {form ? <VerbForm key={form} verb={form} card={card} act={act} onCancel={() => setForm(null)} /> : null}
    </article>
  );
}

function BudgetChange({ change }: { change: Record<string, unknown> }) {
  const money = (v: unknown) =>
    typeof v === 'number'
      ? `${(v / 100).toLocaleString(undefined, { minimumFractionDigits: 2 })} ${String(change.currency ?? '')}`.trim()
      : '—';
  return (
    <dl className="card-facts budget">
      {change.channel ? (
        <div>
          <dt>Channel</dt>
          <dd>{String(change.channel)}</dd>
        </div>
      ) : null}
      {'from' in change ? (
        <div>
          <dt>Budget now</dt>
          <dd>
            {money(change.from)}
            {change.period ? ` a ${String(change.period)}` : ''}
          </dd>
        </div>
      ) : null}
      {'to' in change ? (
        <div>
          <dt>Proposed</dt>
          <dd>
            {money(change.to)}
            {change.period ? ` a ${String(change.period)}` : ''}
          </dd>
        </div>
      ) : null}
      <div>
        <dt>Change</dt>
        <dd>
          {money(change.amount)}
          {change.period ? ` a ${String(change.period)}` : ''}
        </dd>
      </div>
    </dl>
  );
}

function VerbForm({ verb, card, act, onCancel }: { verb: Verb; card: ReviewCard; act: DetailProps['act']; onCancel: () => void }) {
  const id = useId();
  const [text, setText] = useState('');
  const [choice, setChoice] = useState<string>('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const first = useRef<HTMLTextAreaElement & HTMLInputElement>(null);
  const choices = verb === 'snooze' ? snoozeChoices(new Date()) : [];
  useEffect(() => first.current?.focus(), []);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    let result: string | null;
    if (verb === 'request_changes') result = await act(card, verb, { text }, 'request-changes');
    else if (verb === 'dismiss') result = await act(card, verb, text.trim() ? { reason: text } : {}, 'dismiss');
    else if (verb === 'answer') result = await act(card, verb, { action: 'answer', text }, 'answer');
    else if (verb === 'choose') result = await act(card, verb, { action: 'choose', optionValues: [choice] }, 'answer');
    else {
      const until = choices.find((c) => c.label === choice)?.until;
      result = until === undefined ? 'Pick when the card should come back.' : await act(card, verb, { until }, 'snooze');
    }
    setBusy(false);
    setError(result);
  };

  const textLabel =
    verb === 'request_changes'
      ? 'What should change?'
      : verb === 'dismiss'
        ? 'Why dismiss it? (optional; it teaches the agent)'
        : 'Your answer';
  const submitLabel =
    verb === 'request_changes'
      ? 'Request changes'
      : verb === 'dismiss'
        ? 'Dismiss'
        : verb === 'snooze'
          ? 'Snooze'
          : verb === 'choose'
            ? 'Choose'
            : 'Answer';
  return (
    <form className="verb-form" onSubmit={submit} aria-label={submitLabel}>
      {verb === 'snooze' || verb === 'choose' ? (
        <fieldset className="choices">
          <legend>{verb === 'snooze' ? 'Bring it back' : 'Pick one'}</legend>
          {(verb === 'snooze' ? choices.map((c) => ({ value: c.label, label: c.label })) : (card.options ?? [])).map((o, i) => (
            <label key={o.value} className="choice">
              <input
                type="radio"
                name={`${id}-choice`}
                value={o.value}
                checked={choice === o.value}
                onChange={() => setChoice(o.value)}
                ref={i === 0 ? first : undefined}
              />
              {o.label}
            </label>
          ))}
        </fieldset>
      ) : (
        <div className="field">
          <label htmlFor={`${id}-text`}>{textLabel}</label>
          <textarea
            id={`${id}-text`}
            ref={first}
            rows={4}
            value={text}
            maxLength={verb === 'dismiss' ? 2000 : 8000}
            required={verb !== 'dismiss'}
            onChange={(e) => setText(e.target.value)}
          />
        </div>
      )}
      <div className="actions">
        <button type="submit" className={verb === 'dismiss' ? 'button danger' : 'button primary'} disabled={busy}>
          {submitLabel}
        </button>
        <button type="button" className="button secondary" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <FormError error={error} />
    </form>
  );
}
