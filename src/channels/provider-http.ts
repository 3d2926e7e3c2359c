import { tracedCalls } from '../tracing/spans.js';
import { AnswerLost, NotShipped, type Lookup, type Shipped, type Work } from './channel.types.js';

/** One event a provider bridge reports (docs/provider-bridge.md): `type`, its own `id`, and what it is about. */
export interface ProviderEvent {
  id: string;
  type: string;
  at: number | null;
  data: Record<string, unknown>;
}

export interface ProviderPage {
  events: ProviderEvent[];
  /** Where the next poll goes on from; null when the bridge gave none (poll again from the same cursor). */
  next: string | null;
}

export interface ProviderBridge {
  ship(work: Work, idempotencyKey: string): Promise<Shipped>;
  lookup(idempotencyKey: string): Promise<Lookup>;
  poll(after: string | null, limit: number): Promise<ProviderPage>;
}

export interface BridgeOptions {
  /** The bridge's base URL (no trailing slash); the paths below are under it. */
  url: string;
  key: string;
  /** Every request is cut off after this long. */
  timeoutMs: number;
  /** Words for messages: "the network provider". */
  service: string;
}

const NOT_REACHED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

function causeCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/**
 * The generic JSON-over-HTTP transport every provider adapter (network, ads) ships through: the contract
 * a thin provider bridge implements (docs/provider-bridge.md).
 * - `POST {url}/v1/ship` with `Idempotency-Key` and `Authorization: Bearer <key>`, `{ kind, to, subject,
 *   body, details }` → 200/201 `{ id }`. A 4xx (but 408, 409, 425, 429) is a refusal for good; a 5xx
 *   or a connection refused before anything was sent: not shipped, a retry may do; a timeout or a
 *   connection dropped after the request went out: the answer is lost (the shipping path reconciles).
 * - `GET {url}/v1/ship/{key}` → 200 `{ id }` (it shipped), 404 (it did not); anything else: unknown.
 * - `GET {url}/v1/events?after=<cursor>&limit=<n>` → 200 `{ events: [{ id, type, at, data }], next }`.
 * Each call is a span (`provider ship`, `provider lookup`, `provider poll`).
 */
export function providerBridge(opts: BridgeOptions): ProviderBridge {
  return tracedCalls('provider', bridgeCalls(opts), ['ship', 'lookup', 'poll']);
}

function bridgeCalls(opts: BridgeOptions): ProviderBridge {
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    accept: 'application/json',
    authorization: `Bearer ${opts.key}`,
    ...extra,
  });
  const get = (path: string) => fetch(`${opts.url}${path}`, { headers: headers(), signal: AbortSignal.timeout(opts.timeoutMs) });
  return {
    async ship(work, key) {
      let res: Response;
      try {
        res = await fetch(`${opts.url}/v1/ship`, {
          method: 'POST',
          headers: headers({ 'content-type': 'application/json', 'idempotency-key': key }),
          body: JSON.stringify({ kind: work.kind, to: work.to, subject: work.subject, body: work.body, details: work.details }),
          signal: AbortSignal.timeout(opts.timeoutMs),
        });
      } catch (err) {
        const code = causeCode(err);
        if (code && NOT_REACHED.has(code)) throw new NotShipped(`${opts.service} could not be reached (${code})`);
        throw new AnswerLost(`${opts.service}'s answer was lost: ${(err as Error).message}`);
      }
      let body: { id?: unknown; error?: unknown; message?: unknown };
      try {
        body = (await res.json()) as typeof body;
      } catch (err) {
        // The status came but the body did not: on a success, what it took is only known by lookup.
        if (res.ok) throw new AnswerLost(`${opts.service}'s answer was cut off: ${(err as Error).message}`);
        body = {};
      }
      if (res.ok) return { providerId: str(body.id) ?? key };
      const said = str(body.message) ?? str(body.error);
      if (res.status >= 400 && res.status < 500 && ![408, 409, 425, 429].includes(res.status)) {
        throw new NotShipped(`HTTP ${res.status}${said ? `: ${said.slice(0, 200)}` : ''}`, true);
      }
      if (res.status >= 500) throw new NotShipped(`${opts.service} answered HTTP ${res.status}`);
      // 408, 409 (the same key in flight), 425, 429: it may have been taken; the key makes a re-ship safe.
      throw new AnswerLost(`${opts.service} answered HTTP ${res.status}`);
    },
    async lookup(key) {
      let res: Response;
      try {
        res = await get(`/v1/ship/${encodeURIComponent(key)}`);
      } catch {
        return { state: 'unknown' };
      }
      if (res.status === 404) return { state: 'not_found' };
      if (res.status !== 200) return { state: 'unknown' };
      const body = (await res.json().catch(() => null)) as { id?: unknown } | null;
      return body ? { state: 'sent', providerId: str(body.id) ?? key } : { state: 'unknown' };
    },
    async poll(after, limit) {
      const q = new URLSearchParams({ limit: String(limit), ...(after !== null ? { after } : {}) });
      const res = await get(`/v1/events?${q}`);
      if (res.status !== 200) throw new Error(`${opts.service}'s events answered HTTP ${res.status}`);
      const body = (await res.json()) as { events?: unknown; next?: unknown };
      if (!Array.isArray(body.events)) throw new Error(`${opts.service}'s events answer has no events list`);
      const events: ProviderEvent[] = [];
      for (const e of body.events.slice(0, limit) as Record<string, unknown>[]) {
        const id = str(e?.id);
        const type = str(e?.type);
        if (!id || !type) continue;
        const data = e.data && typeof e.data === 'object' ? (e.data as Record<string, unknown>) : {};
        events.push({ id, type, at: typeof e.at === 'number' && Number.isFinite(e.at) ? e.at : null, data });
      }
      return { events, next: str(body.next) };
    },
  };
}
