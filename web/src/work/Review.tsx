import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, api, errorText } from '../api';
import { FormError, Notice, PageHeader } from '../ui';
import { CardDetail, HelpSheet, ladderWords, type Verb } from './ReviewDetail';
import { type LiveEvent, primaryVerb, QUEUE_STATUSES, type ReviewCard, whatHappened } from './review-model';

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
