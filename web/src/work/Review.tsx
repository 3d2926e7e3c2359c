import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { ApiError, api, errorText } from '../api';
import { FormError, formatDate, Notice, PageHeader } from '../ui';
import {
  durationWords,
  type LiveEvent,
  mailDocument,
  primaryVerb,
  QUEUE_STATUSES,
  type ReviewCard,
  snoozeChoices,
  whatHappened,
} from './review-model';

type Verb = 'request_changes' | 'snooze' | 'dismiss' | 'answer' | 'choose';

const STREAM = '/dashboard/api/review/stream';

/**
 * The review desk: the account's queue, each card's buttons drawn from its `actions` and `primaryLabel`,
 * each verb with its input, the card's detail (a mail in a sandboxed frame), and the queue kept live by the
 * review stream: a card filed appears, a card someone else took leaves, saying who.
 */
export function Review() {
  const [cards, setCards] = useState<ReviewCard[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [selected, setSelected] = useState(0);
  const [openId, setOpenId] = useState<string | null>(null);
  const [form, setForm] = useState<Verb | null>(null);
  const [help, setHelp] = useState(false);
  const [notice, setNotice] = useState<string | null>(null);
  const [live, setLive] = useState<'connecting' | 'live' | 'off'>('connecting');
  const [now, setNow] = useState(() => Date.now());
  /** Cards this page acted on: their stream events are our own. */
  const mine = useRef(new Set<string>());
  /** The latest event per card: who acted, for a 409 that lost the race. */
  const lastEvent = useRef(new Map<string, LiveEvent>());
  /** Cards whose verb lost the race before the stream said who won. */
  const lost = useRef(new Map<string, string>());
  const itemRefs = useRef(new Map<string, HTMLButtonElement>());

  const load = useCallback(async () => {
    try {
      const res = await api<{ items: ReviewCard[] }>('GET', '/v1/review?limit=100');
      setCards(res.items);
      setLoadError(null);
    } catch (err) {
      setLoadError(errorText(err));
    }
  }, []);

  const removeCard = useCallback((id: string) => {
    setCards((cs) => (cs ? cs.filter((c) => c.id !== id) : cs));
    setOpenId((o) => (o === id ? null : o));
  }, []);

  // The stream first, then the queue: a card filed in between arrives by either and is kept once.
  useEffect(() => {
    const source = new EventSource(STREAM);
    const onFiled = async (e: MessageEvent<string>) => {
      const ev = JSON.parse(e.data) as LiveEvent;
      try {
        const { item } = await api<{ item: ReviewCard }>('GET', `/v1/review/${encodeURIComponent(ev.cardId)}`);
        if (!QUEUE_STATUSES.includes(item.status)) return;
        setCards((cs) => (cs && !cs.some((c) => c.id === item.id) ? [item, ...cs] : cs));
        setNotice(`New card: “${item.title}”.`);
      } catch {
        // Gone again before we read it: nothing to show.
      }
    };
    const onUpdated = async (e: MessageEvent<string>) => {
      const ev = JSON.parse(e.data) as LiveEvent;
      lastEvent.current.set(ev.cardId, ev);
      const lostTitle = lost.current.get(ev.cardId);
      if (lostTitle !== undefined) {
        lost.current.delete(ev.cardId);
        setNotice(`${whatHappened(ev.status)} by ${ev.by}: “${lostTitle}”.`);
        return;
      }
      if (mine.current.has(ev.cardId)) return;
      if (ev.decided || !QUEUE_STATUSES.includes(ev.status)) {
        setCards((cs) => {
          const card = cs?.find((c) => c.id === ev.cardId);
          if (card) setNotice(`${whatHappened(ev.status)} by ${ev.by}: “${card.title}”.`);
          return cs ? cs.filter((c) => c.id !== ev.cardId) : cs;
        });
        setOpenId((o) => (o === ev.cardId ? null : o));
        setForm(null);
        return;
      }
      try {
        const { item } = await api<{ item: ReviewCard }>('GET', `/v1/review/${encodeURIComponent(ev.cardId)}`);
        setCards((cs) => (cs ? cs.map((c) => (c.id === item.id ? item : c)) : cs));
      } catch {
        removeCard(ev.cardId);
      }
    };
    source.addEventListener('card.filed', (e) => void onFiled(e as MessageEvent<string>));
    source.addEventListener('card.updated', (e) => void onUpdated(e as MessageEvent<string>));
    source.addEventListener('resync', () => void load());
    source.addEventListener('ready', () => setLive('live'));
    source.addEventListener('end', (e) => {
      const reason = (JSON.parse((e as MessageEvent<string>).data) as { reason?: string }).reason;
      if (reason === 'session') {
        source.close();
        setLive('off');
      }
    });
    source.onerror = () => setLive(source.readyState === EventSource.CLOSED ? 'off' : 'connecting');
    void load();
    return () => source.close();
  }, [load, removeCard]);

  // Time left on the trust ladder's cards, in words, kept current.
  useEffect(() => {
    const t = window.setInterval(() => setNow(Date.now()), 30_000);
    return () => window.clearInterval(t);
  }, []);

  // A link to one card (the chat's "Filed for review"): open it once the queue is read.
  const linked = useRef(new URLSearchParams(window.location.search).get('card'));
  useEffect(() => {
    const want = linked.current;
    if (!cards || !want) return;
    linked.current = null;
    const at = cards.findIndex((c) => c.id === want);
    if (at === -1) setNotice('That card is no longer waiting for review.');
    else {
      setSelected(at);
      setOpenId(want);
    }
  }, [cards]);

  const list = cards ?? [];
  const index = Math.min(selected, Math.max(list.length - 1, 0));
  const current = list[index] ?? null;
  const open = list.find((c) => c.id === openId) ?? null;
  // The card the verb keys act on: the open one, else the selected one.
  const target = open ?? current;

  const focusCard = useCallback((id: string | undefined) => {
    if (id) itemRefs.current.get(id)?.focus();
  }, []);

  const act = useCallback(
    async (card: ReviewCard, verb: string, body: Record<string, unknown>, path: string) => {
      const removeOrRefresh = (card: ReviewCard, verb: string) => {
        const words: Record<string, string> = {
          send: 'Sent',
          approve: 'Approved',
          answer: 'Answered',
          choose: 'Chosen',
          request_changes: 'Changes requested',
          snooze: 'Snoozed',
          dismiss: 'Dismissed',
        };
        setNotice(`${words[verb] ?? 'Done'}: “${card.title}”.`);
        if (verb === 'request_changes') {
          setCards((cs) => (cs ? cs.map((c) => (c.id === card.id ? { ...c, status: 'needs_revision', actions: ['dismiss'] } : c)) : cs));
          return;
        }
        removeCard(card.id);
      };
      mine.current.add(card.id);
      try {
        await api('POST', `/v1/review/${encodeURIComponent(card.id)}/${path}`, body);
        removeOrRefresh(card, verb);
        setForm(null);
        return null;
      } catch (err) {
        mine.current.delete(card.id);
        if (err instanceof ApiError && err.status === 409) {
          // Someone (or the trust ladder) got there first: say who, from the stream.
          const ev = lastEvent.current.get(card.id);
          try {
            const { item } = await api<{ item: ReviewCard }>('GET', `/v1/review/${encodeURIComponent(card.id)}`);
            if (QUEUE_STATUSES.includes(item.status)) {
              setCards((cs) => (cs ? cs.map((c) => (c.id === item.id ? item : c)) : cs));
              return errorText(err);
            }
            if (ev && ev.status === item.status) setNotice(`${whatHappened(ev.status)} by ${ev.by}: “${card.title}”.`);
            else {
              lost.current.set(card.id, card.title);
              setNotice(`${whatHappened(item.status)} by someone else: “${card.title}”.`);
            }
          } catch {
            setNotice(`“${card.title}” is no longer in the queue.`);
          }
          removeCard(card.id);
          setForm(null);
          return null;
        }
        return errorText(err);
      }
    },
    [removeCard],
  );

  const primary = useCallback(
    async (card: ReviewCard) => {
      const verb = primaryVerb(card);
      if (verb === 'send') return act(card, 'send', {}, 'send');
      if (verb === 'approve') return act(card, 'approve', { action: 'approve' }, 'answer');
      if (verb === 'answer' || verb === 'choose') {
        setOpenId(card.id);
        setForm(verb);
      }
      return null;
    },
    [act],
  );
  const [primaryError, setPrimaryError] = useState<string | null>(null);
  const runPrimary = useCallback(
    async (card: ReviewCard) => {
      setPrimaryError(await primary(card));
    },
    [primary],
  );

  // The keys: j/k next/previous, Enter open, e or Shift+Enter the primary action, r/s/d the verbs, ? help.
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) {
        if (e.key === 'Escape') setForm(null);
        return;
      }
      if (e.metaKey || e.ctrlKey || e.altKey) return;
      const key = e.key;
      if (key === 'Escape') {
        if (help) setHelp(false);
        else if (form) setForm(null);
        else if (openId) {
          setOpenId(null);
          focusCard(openId);
        }
        return;
      }
      if (key === '?') {
        e.preventDefault();
        setHelp((h) => !h);
        return;
      }
      if (!list.length) return;
      if (key === 'j' || key === 'k') {
        e.preventDefault();
        const next = Math.max(0, Math.min(list.length - 1, index + (key === 'j' ? 1 : -1)));
        setSelected(next);
        if (openId) setOpenId(list[next]!.id);
        setForm(null);
        focusCard(list[next]!.id);
        return;
      }
      if (!target) return;
      if (key === 'Enter' && e.shiftKey) {
        e.preventDefault();
        void runPrimary(target);
      } else if (key === 'Enter') {
        // On a button, Enter is the button's own; on the list it opens the card.
        if (t?.tagName === 'BUTTON' && !t.dataset.cardId) return;
        e.preventDefault();
        setOpenId(target.id);
        setForm(null);
      } else if (key === 'e') {
        e.preventDefault();
        void runPrimary(target);
      } else if (key === 'r' && target.actions.includes('request_changes')) {
        e.preventDefault();
        setOpenId(target.id);
        setForm('request_changes');
      } else if (key === 's' && target.actions.includes('snooze')) {
        e.preventDefault();
        setOpenId(target.id);
        setForm('snooze');
      } else if (key === 'd' && target.actions.includes('dismiss')) {
        e.preventDefault();
        setOpenId(target.id);
        setForm('dismiss');
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [list, index, target, openId, form, help, focusCard, runPrimary]);

  return (
    <section className="review-desk">
      <PageHeader title="Review">
        What the agent wants to do, waiting for you. Press <kbd>?</kbd> for the keys.
      </PageHeader>
      <p className="muted small" role="status">
        {live === 'live'
          ? 'Live: new cards appear as they are filed.'
          : live === 'connecting'
            ? 'Connecting to live updates…'
            : 'Live updates stopped; reload the page.'}
      </p>
      <div aria-live="polite">{notice ? <Notice>{notice}</Notice> : null}</div>
      <FormError error={loadError ?? primaryError} />
      {help ? <HelpSheet onClose={() => setHelp(false)} /> : null}
      {cards === null && !loadError ? <p className="muted">Loading…</p> : null}
      {cards && cards.length === 0 ? <p className="card muted">Nothing is waiting for review.</p> : null}
      <div className="desk">
        {list.length ? (
          <ul className="queue" aria-label="Cards waiting for review">
            {list.map((c, i) => (
              <li key={c.id} className={i === index ? 'queue-item selected' : 'queue-item'}>
                <button
                  type="button"
                  className="queue-open"
                  data-card-id={c.id}
                  aria-current={i === index ? 'true' : undefined}
                  aria-expanded={openId === c.id}
                  ref={(el) => {
                    if (el) itemRefs.current.set(c.id, el);
                    else itemRefs.current.delete(c.id);
                  }}
                  onFocus={() => setSelected(i)}
                  onClick={() => {
                    setSelected(i);
                    setOpenId(c.id);
                    setForm(null);
                  }}
                >
                  <span className="queue-title">{c.title}</span>
                  <span className="queue-meta">
                    <span className="badge">{c.status === 'needs_revision' ? 'Revising' : c.sourceType.replace(/_/g, ' ')}</span>
                    {c.autoResolveAt ? <span className="badge warn">{ladderWords(c.autoResolveAt, now, true)}</span> : null}
                  </span>
                </button>
              </li>
            ))}
          </ul>
        ) : null}
        {open ? (
          <CardDetail
            key={open.id}
            card={open}
            now={now}
            form={form}
            setForm={setForm}
            act={act}
            onPrimary={() => primary(open)}
            onClose={() => {
              setOpenId(null);
              focusCard(open.id);
            }}
          />
        ) : null}
      </div>
    </section>
  );
}

function ladderWords(at: number, now: number, short = false): string {
  const left = at - now;
  if (left <= 0) return short ? 'Approving itself now' : 'The trust ladder approves it any moment now unless someone acts.';
  return short
    ? `Approves itself in ${durationWords(left)}`
    : `The trust ladder approves it in ${durationWords(left)} unless someone acts first.`;
}

function HelpSheet({ onClose }: { onClose: () => void }) {
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

function CardDetail({ card, now, form, setForm, act, onPrimary, onClose }: DetailProps) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);
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
