import { isIPv4 } from 'node:net';

/** The eight groups of an IPv6 address, `::` expanded, leading zeros dropped, lowercased. */
function ipv6Groups(address: string): string[] {
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  return groups.map((g) => g.replace(/^0+(?=.)/, ''));
}

/** An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as its IPv4; anything else as is. */
function unmapped(address: string): string {
  return /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] ?? address;
}

/**
 * The key a client's limits are counted under: an IPv4 address as is (an IPv4-mapped IPv6 address is
 * read as its IPv4), an IPv6 address by its /64 (one host is usually given a whole /64, so counting
 * single IPv6 addresses would let one sender take as many as it likes).
 */
export function clientKey(address: string): string {
  const a = unmapped(address);
  if (isIPv4(a) || !a.includes(':')) return a;
  return `${ipv6Groups(a).slice(0, 4).join(':')}::/64`;
}

/**
 * The network a client address belongs to, for the sessions one network may hold: its IPv4 /24, or its IPv6
 * /48 (the usual size of one site's assignment). An IPv4-mapped IPv6 address is read as its IPv4.
 */
export function networkKey(address: string): string {
  const a = unmapped(address);
  if (isIPv4(a)) return `${a.split('.').slice(0, 3).join('.')}.0/24`;
  if (!a.includes(':')) return a;
  return `${ipv6Groups(a).slice(0, 3).join(':')}::/48`;
}

export interface ClientLimitSettings {
  sessionsPerIp: number;
  messagesPerMinute: number;
  bytesPerHour: number;
}

interface Entry {
  sessions: number;
  minuteStart: number;
  messages: number;
  hourStart: number;
  bytes: number;
}

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
/** Client addresses remembered at once; past it, the ones with no open session and the oldest go first. */
export const MAX_TRACKED_CLIENTS = 10_000;

/**
 * Per-client counters of one listener process, in memory: open sessions, messages started in the
 * current minute and message bytes received in the current hour (fixed windows). The map is bounded:
 * an address with no session whose windows have passed is forgotten, and past MAX_TRACKED_CLIENTS
 * the least recently seen addresses without a session are forgotten first.
 */
export function createClientLimits(s: ClientLimitSettings, now: () => number = Date.now, maxTracked = MAX_TRACKED_CLIENTS) {
  const entries = new Map<string, Entry>();

  const trim = () => {
    if (entries.size <= maxTracked) return;
    const t = now();
    for (const [k, e] of entries) {
      if (e.sessions === 0 && t - e.minuteStart >= MINUTE_MS && t - e.hourStart >= HOUR_MS) entries.delete(k);
    }
    // Still full: forget the least recently seen without a session (Map order is last touch).
    for (const [k, e] of entries) {
      if (entries.size <= maxTracked) break;
      if (e.sessions === 0) entries.delete(k);
    }
  };

  /** The client's entry with its windows rolled forward, moved to the end (most recently seen). */
  const touch = (key: string): Entry => {
    const t = now();
    let e = entries.get(key);
    if (e) entries.delete(key);
    else e = { sessions: 0, minuteStart: t, messages: 0, hourStart: t, bytes: 0 };
    if (t - e.minuteStart >= MINUTE_MS) Object.assign(e, { minuteStart: t, messages: 0 });
    if (t - e.hourStart >= HOUR_MS) Object.assign(e, { hourStart: t, bytes: 0 });
    entries.set(key, e);
    trim();
    return e;
  };

  return {
    /** Opens a session for the client; false (nothing counted) when it holds `sessionsPerIp` already. */
    openSession(key: string): boolean {
      const e = touch(key);
      if (e.sessions >= s.sessionsPerIp) return false;
      e.sessions++;
      return true;
    },
    closeSession(key: string): void {
      const e = entries.get(key);
      if (e && e.sessions > 0) e.sessions--;
    },
    /** Whether the client may start a message (of `declared` bytes, when it said): the minute's and the hour's budgets. */
    mayStart(key: string, declared = 0): 'ok' | 'messages' | 'bytes' {
      const e = touch(key);
      if (e.messages >= s.messagesPerMinute) return 'messages';
      if (e.bytes + declared > s.bytesPerHour) return 'bytes';
      return 'ok';
    },
    /** Counts a message started (its DATA begun). */
    countMessage(key: string): void {
      touch(key).messages++;
    },
    /** Counts message bytes received; false once the hour's budget is passed. */
    addBytes(key: string, n: number): boolean {
      const e = touch(key);
      e.bytes += n;
      return e.bytes <= s.bytesPerHour;
    },
    /** Addresses remembered now (tests). */
    get tracked() {
      return entries.size;
    },
  };
}
