import { isIP } from 'node:net';
import { FIXED_WINDOW_COUNT, keyspace, type Redis } from '../redis.js';

/**
 * Who is calling a public door, as far as its TCP peer tells (`req.ip`; `trust proxy` stays off):
 * - `address`: one host. IPv4 as it is (also when IPv4-mapped); IPv6 by its /64, since one host commonly
 *   holds a whole /64 (privacy addresses rotate inside it).
 * - `network`: the network that host sits in, what per-client limits count by. IPv4 by its /24, IPv6 by
 *   its /48 (the usual assignment to one site): a client rotating through its own addresses stays one client.
 * An address that cannot be read is `unknown` for both, so it is still limited, together with the others.
 */
export interface Client {
  address: string;
  network: string;
}

/** The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail becomes the last two), or null. */
function groups6(ip: string): number[] | null {
  let text = ip;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const all = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  if (all.length !== 8) return null;
  return all.map((g) => parseInt(g, 16));
}

const hex = (gs: number[]) => gs.map((g) => g.toString(16)).join(':');

export function clientOf(ip: string | undefined): Client {
  const bare = (ip ?? '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  const v4 = mapped ? mapped[1]! : isIP(bare) === 4 ? bare : null;
  if (v4) return { address: v4, network: `${v4.split('.').slice(0, 3).join('.')}.0/24` };
  const gs = isIP(bare) === 6 ? groups6(bare) : null;
  if (!gs) return { address: 'unknown', network: 'unknown' };
  return { address: `${hex(gs.slice(0, 4))}::/64`, network: `${hex(gs.slice(0, 3))}::/48` };
}

/**
 * A fixed-window count per client network in Redis (every API process shares it): the first request
 * starts the window, one key per network with the window as its TTL. `take` counts one request and
 * answers the seconds to wait when it is over `limit` (0: allowed). Redis out of reach: allowed (the
 * door stays open; the caller logs nothing per request, so a Redis outage cannot flood the log).
 */
export function clientWindow(redis: Redis, queuePrefix: string, name: string, opts: { limit: number; windowMs: number }) {
  if (!('gasClientWindow' in redis)) redis.defineCommand('gasClientWindow', { numberOfKeys: 1, lua: FIXED_WINDOW_COUNT });
  const r = redis as Redis & { gasClientWindow(key: string, windowMs: number): Promise<[number, number]> };
  const base = `${keyspace(queuePrefix)}:${name}`;
  return {
    /** Counts one request of `client` (a network, or any other key of the caller's, such as an account). */
    async take(client: Pick<Client, 'network'>): Promise<number> {
      let answer: [number, number];
      try {
        answer = await r.gasClientWindow(`${base}:{${client.network}}`, opts.windowMs);
      } catch {
        return 0;
      }
      const [n, ttl] = answer.map(Number) as [number, number];
      return n > opts.limit ? Math.max(1, Math.ceil(ttl / 1000)) : 0;
    },
  };
}
