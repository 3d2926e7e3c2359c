import { type FormEvent, useCallback, useEffect, useId, useRef, useState } from 'react';
import { api, errorText } from '../api';
import { Link } from '../router';
import { FormError, formatDate, PageHeader } from '../ui';

interface Message {
  requestId: string;
  status: 'queued' | 'running' | 'replied' | 'failed';
  text: string;
  sentAt: number;
  replies: { text: string; at: number }[];
  failure?: string;
  interrupted: boolean;
}
interface ThreadItem {
  role: 'user' | 'agent';
  requestId: string;
  text: string;
  at: number;
}
interface FiledCard {
  id: string;
  title: string;
  status: string;
  primaryLabel: string;
}

/** One exchange on the page: what was sent, the turn's state and replies, the cards it filed. */
interface Exchange {
  requestId: string;
  text: string;
  at: number;
  status: Message['status'];
  replies: { text: string; at: number }[];
  failure?: string;
  interrupted?: boolean;
  cards: FiledCard[];
}

const TERMINAL = ['replied', 'failed'];
/** Polling a working turn: every second for a minute, then every five seconds, for at most 30 minutes (the contract's running window). */
const pollDelay = (n: number) => (n < 60 ? 1_000 : 5_000);
const MAX_POLLS = 60 + 29 * 12;

/**
 * The agent chat: the person's own conversation (GET /api/v1/agent/thread under the dashboard), a message
 * sent with POST /api/v1/agent/messages, the turn shown working until it replied or failed, and the cards
 * the turn filed linked to the review desk.
 */
export function Agent() {
  const [exchanges, setExchanges] = useState<Exchange[] | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const id = useId();
  const alive = useRef(true);
  useEffect(
    () => () => {
      alive.current = false;
    },
    [],
  );

  const update = useCallback((requestId: string, patch: Partial<Exchange>) => {
    setExchanges((xs) => (xs ? xs.map((x) => (x.requestId === requestId ? { ...x, ...patch } : x)) : xs));
  }, []);

  const follow = useCallback(
    async (requestId: string) => {
      for (let n = 0; n < MAX_POLLS && alive.current; n++) {
        try {
          const { message } = await api<{ message: Message }>('GET', `/v1/agent/messages/${encodeURIComponent(requestId)}`);
          update(requestId, {
            status: message.status,
            replies: message.replies,
            failure: message.failure,
            interrupted: message.interrupted,
          });
          if (TERMINAL.includes(message.status)) {
            const { items } = await api<{ items: FiledCard[] }>('GET', `/agent/messages/${encodeURIComponent(requestId)}/cards`);
            update(requestId, { cards: items });
            return;
          }
        } catch (err) {
          update(requestId, { failure: errorText(err) });
          return;
        }
        await new Promise((r) => setTimeout(r, pollDelay(n)));
      }
    },
    [update],
  );

  useEffect(() => {
    (async () => {
      try {
        const { items } = await api<{ items: ThreadItem[] }>('GET', '/v1/agent/thread?limit=50');
        // The thread is newest first; one exchange per request, oldest first on the page.
        const byRequest = new Map<string, Exchange>();
        for (const item of [...items].reverse()) {
          const x = byRequest.get(item.requestId) ?? {
            requestId: item.requestId,
            text: '',
            at: item.at,
            status: 'replied' as const,
            replies: [],
            cards: [],
          };
          if (item.role === 'user') x.text = item.text;
          else x.replies.push({ text: item.text, at: item.at });
          byRequest.set(item.requestId, x);
        }
        setExchanges([...byRequest.values()]);
      } catch (err) {
        setLoadError(errorText(err));
        setExchanges([]);
      }
    })();
  }, []);

  const send = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const clientRequestId = `dash-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 10)}`;
      const res = await api<{ requestId: string }>('POST', '/v1/agent/messages', { text, clientRequestId });
      setExchanges((xs) => [...(xs ?? []), { requestId: res.requestId, text, at: Date.now(), status: 'queued', replies: [], cards: [] }]);
      setText('');
      void follow(res.requestId);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="agent-chat">
      <PageHeader title="Agent">Tell the agent what to do or ask it something. Work it wants to ship waits on the review desk.</PageHeader>
      <FormError error={loadError} />
      {exchanges === null ? <p className="muted">Loading…</p> : null}
      {exchanges && exchanges.length === 0 && !loadError ? <p className="muted">No messages yet.</p> : null}
      <ol className="chat" aria-label="Conversation">
        {(exchanges ?? []).map((x) => (
          <li key={x.requestId} className="exchange">
            {x.text ? (
              <div className="bubble you">
                <span className="visually-hidden">You: </span>
                {x.text}
                <span className="muted small when"> {formatDate(x.at)}</span>
              </div>
            ) : null}
            {x.replies.map((r) => (
              <div key={`${r.at}-${r.text.slice(0, 20)}`} className="bubble agent">
                <span className="visually-hidden">Agent: </span>
                {r.text}
              </div>
            ))}
            <div aria-live="polite">
              {!TERMINAL.includes(x.status) ? (
                <p className="muted small working" role="status">
                  {x.status === 'queued' ? 'Waiting for the agent…' : 'The agent is working…'}
                </p>
              ) : null}
              {x.status === 'failed' ? <p className="form-error">The turn failed: {x.failure ?? 'no reason given'}.</p> : null}
              {x.interrupted ? <p className="muted small">A later message stopped this turn.</p> : null}
            </div>
            {x.cards.length ? (
              <div className="filed">
                <p className="small">Filed for review:</p>
                <ul>
                  {x.cards.map((c) => (
                    <li key={c.id}>
                      <Link to={`/review?card=${encodeURIComponent(c.id)}`}>{c.title}</Link>{' '}
                      <span className="badge">{c.status === 'pending' ? 'Waiting for review' : c.status.replace(/_/g, ' ')}</span>
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
          </li>
        ))}
      </ol>
      <form className="card chat-form" onSubmit={send}>
        <div className="field">
          <label htmlFor={`${id}-text`}>Message</label>
          <textarea
            id={`${id}-text`}
            rows={3}
            value={text}
            maxLength={4000}
            required
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && (e.metaKey || e.ctrlKey)) e.currentTarget.form?.requestSubmit();
            }}
          />
          <p className="hint">Up to 4,000 characters. Ctrl+Enter sends.</p>
        </div>
        <div className="actions">
          <button type="submit" className="button primary" disabled={busy || !text.trim()}>
            Send
          </button>
        </div>
        <FormError error={error} />
      </form>
    </section>
  );
}
