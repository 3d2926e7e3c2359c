import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, api, errorText } from '../api';
import { FormError, Notice, PageHeader } from '../ui';
import { CardDetail, HelpSheet, ladderWords, type Verb } from './ReviewDetail';
import { QueueRow, useDeskKeys } from './ReviewQueue';
import {
  DONE_WORDS,
  deciderFrom,
  type LiveEvent,
  primaryVerb,
  QUEUE_STATUSES,
  type ReviewCard,
  takenWords,
  whatHappened,
} from './review-model';

const STREAM = '/dashboard/api/review/stream';
/** How long a verb that lost the race waits for the stream to say who won (a reconnect waits at most 5 s). */
const LOST_WAIT_MS = 6_000;

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
  /** Cards whose verb lost the race before the stream said who won: their titles, and the wait for the stream. */
  const lost = useRef(new Map<string, { title: string; timer: number }>());
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
      const lostCard = lost.current.get(ev.cardId);
      if (lostCard) {
        lost.current.delete(ev.cardId);
        window.clearTimeout(lostCard.timer);
        setNotice(takenWords(ev.status, ev.by, ev.at, lostCard.title));
        removeCard(ev.cardId);
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

  // The rows' callbacks name a card, not a position, so a card leaving does not redraw every row after it.
  const listRef = useRef(list);
  listRef.current = list;
  const registerRow = useCallback((id: string, el: HTMLButtonElement | null) => {
    if (el) itemRefs.current.set(id, el);
    else itemRefs.current.delete(id);
  }, []);
  const selectRow = useCallback(
    (id: string) =>
      setSelected(
        Math.max(
          0,
          listRef.current.findIndex((c) => c.id === id),
        ),
      ),
    [],
  );
  const openRow = useCallback(
    (id: string) => {
      selectRow(id);
      setOpenId(id);
      setForm(null);
    },
    [selectRow],
  );

  const focusCard = useCallback((id: string | undefined) => {
    if (id) itemRefs.current.get(id)?.focus();
  }, []);

  const act = useCallback(
    async (card: ReviewCard, verb: string, body: Record<string, unknown>, path: string) => {
      const removeOrRefresh = (card: ReviewCard, verb: string) => {
        setNotice(`${DONE_WORDS[verb] ?? 'Done'}: “${card.title}”.`);
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
          // Someone (or the trust ladder) got there first: say who and when, once, from the stream.
          const ev = lastEvent.current.get(card.id);
          setForm(null);
          try {
            const { item } = await api<{ item: ReviewCard }>('GET', `/v1/review/${encodeURIComponent(card.id)}`);
            if (QUEUE_STATUSES.includes(item.status)) {
              setCards((cs) => (cs ? cs.map((c) => (c.id === item.id ? item : c)) : cs));
              return errorText(err);
            }
            if (ev && !QUEUE_STATUSES.includes(ev.status)) setNotice(takenWords(ev.status, ev.by, ev.at, card.title));
            else {
              // The stream has not told this page yet: its event names who and takes the card off; if it does not
              // come (live updates down), the card's own record says what it can.
              const by = deciderFrom(item.resolution) ?? 'someone else';
              const timer = window.setTimeout(() => {
                if (!lost.current.delete(card.id)) return;
                setNotice(takenWords(item.status, by, item.updatedAt, card.title));
                removeCard(card.id);
              }, LOST_WAIT_MS);
              lost.current.set(card.id, { title: card.title, timer });
              return null;
            }
          } catch {
            setNotice(`“${card.title}” is no longer in the queue.`);
          }
          removeCard(card.id);
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
  useDeskKeys({ list, index, target, openId, form, help, setHelp, setForm, setOpenId, setSelected, focusCard, runPrimary });

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
              <QueueRow
                key={c.id}
                card={c}
                selected={i === index}
                expanded={openId === c.id}
                ladder={c.autoResolveAt ? ladderWords(c.autoResolveAt, now, true) : null}
                register={registerRow}
                onSelect={selectRow}
                onOpen={openRow}
              />
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
