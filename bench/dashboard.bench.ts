import { createAccount } from '../src/accounts/accounts.service.js';
import { adminActor } from '../src/audit/audit.service.js';
import { createPerson } from '../src/people/people.service.js';
import { hashPassword, passwordMatches } from '../src/people/passwords.js';
import { seedReviewCards } from '../src/review/seed.js';
import { mintToken } from '../src/tokens/tokens.service.js';
import { configWith } from '../test/helpers/config.js';
import {
  compare,
  cpuMultiple,
  fmt,
  freePort,
  type Load,
  median,
  NO_RATE_LIMITS,
  pct,
  seeding,
  startServer,
  stop,
  type Target,
} from './lib.js';
import type { BenchContext, Section } from './run.js';

const PASSWORD = 'correct horse battery staple';
const ATTEMPTS = 40;

/**
 * The dashboard's costs: a sign-in's time on the server (argon2id at the configured cost, one attempt at a
 * time so the figure is the server's, not a queue's), a wrong password and an unknown address beside it (the
 * same work on purpose), against argon2id's verify alone and `GET /api/v1/me` measured in the same run; and a
 * dashboard read (`GET /dashboard/api/v1/review`, cookie session, remembered by the process) against the
 * same `/api/v1` read with a bearer token (its principal remembered the same way). Target: within 1.2×.
 */
export async function dashboard(ctx: BenchContext): Promise<Section> {
  const config = configWith({ DATABASE_URL: ctx.databaseUrl });
  const email = `bench-${Date.now()}@example.com`;
  const { token, cards } = await seeding(config, async (db) => {
    const account = await createAccount(db, 'Bench');
    const cards = await seedReviewCards(db, account.id);
    await createPerson({ db, config }, adminActor(account.id, 'person create'), {
      accountId: account.id,
      email,
      name: 'Bench',
      role: 'owner',
      password: PASSWORD,
    });
    const { token } = await mintToken(db, config.tokenPrefix, { accountId: account.id, label: 'bench', scopes: ['review:read'] });
    return { token, cards };
  });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await startServer(
    ['bin/start.ts', 'api'],
    {
      DATABASE_URL: config.databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...NO_RATE_LIMITS,
      // The bench signs in wrongly on purpose: the throttle must not answer instead of the password check.
      DASHBOARD_SIGNIN_ADDRESS_FAILURES: '100000',
      DASHBOARD_SIGNIN_NETWORK_FAILURES: '100000',
    },
    `${base}/healthz`,
  );
  try {
    const signIn = async (body: Record<string, string>) => {
      const start = performance.now();
      const res = await fetch(`${base}/dashboard/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return { ms: performance.now() - start, res };
    };
    const hash = await hashPassword(config.dashboard.password, PASSWORD);
    const elapsed = async (fn: () => Promise<unknown>) => {
      const start = performance.now();
      await fn();
      return performance.now() - start;
    };
    // Interleaved (one of each, ATTEMPTS times) so the machine's drift reaches every kind alike.
    const kinds = {
      me: () => fetch(`${base}/api/v1/me`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.arrayBuffer()),
      verify: () => passwordMatches(hash, PASSWORD),
      good: () => signIn({ email, password: PASSWORD }),
      wrong: () => signIn({ email, password: 'not the password at all' }),
      unknown: () => signIn({ email: `nobody-${email}`, password: 'not the password at all' }),
    };
    const times: Record<keyof typeof kinds, number[]> = { me: [], verify: [], good: [], wrong: [], unknown: [] };
    for (let i = 0; i < ATTEMPTS; i++) {
      for (const [name, fn] of Object.entries(kinds) as [keyof typeof kinds, () => Promise<unknown>][]) times[name].push(await elapsed(fn));
    }
    // Unknown against wrong as the median of each round's ratio: the two ran back to back, so drift cancels.
    const paired = median(times.unknown.map((u, i) => u / times.wrong[i]!));
    const [me, verify, good, wrong, unknown] = (['me', 'verify', 'good', 'wrong', 'unknown'] as const).map((k) => median(times[k])) as [
      number,
      number,
      number,
      number,
      number,
    ];

    const { res } = await signIn({ email, password: PASSWORD });
    const cookie = String(res.headers.get('set-cookie')).split(';')[0]!;
    const API = 'GET /api/v1/review (bearer token)';
    const DASH = 'GET /dashboard/api/v1/review (session cookie)';
    const targets: Target[] = [
      { name: API, url: `${base}/api/v1/review`, headers: { authorization: `Bearer ${token}` }, server },
      { name: DASH, url: `${base}/dashboard/api/v1/review`, headers: { cookie }, server },
    ];
    const results = await compare(targets, ctx.rounds, ctx.seconds);
    const [api, dash] = [results.get(API)!, results.get(DASH)!];
    const cpu = (r: Load) => (r.cpuUs === undefined ? '—' : fmt(r.cpuUs));
    const row = (name: string, r: Load) =>
      `| ${name} | ${fmt(r.rps)} | ${fmt(r.p50, 1)} | ${fmt(r.p99, 1)} | ${cpu(r)} | ${r.errors + r.non2xx} |`;
    const { memoryKib, timeCost } = config.dashboard.password;
    return {
      title: 'Dashboard sign-in and reads',
      body: [
        `Sign-in: ${ATTEMPTS} attempts of each kind, one request at a time and the kinds interleaved, on loopback; medians. ` +
          `argon2id m=${memoryKib} KiB, t=${timeCost}, p=1 (the defaults).`,
        '',
        '| request | median ms |',
        '|---|---:|',
        `| \`GET /api/v1/me\` (same server, the floor of a request) | ${fmt(me, 1)} |`,
        `| argon2id verify alone, in the bench process | ${fmt(verify, 1)} |`,
        `| sign-in, right password | ${fmt(good, 1)} |`,
        `| sign-in, wrong password | ${fmt(wrong, 1)} |`,
        `| sign-in, unknown address | ${fmt(unknown, 1)} |`,
        '',
        `Target: a sign-in under ~300 ms on the server. Measured: **${fmt(good, 1)} ms** (${fmt(good / verify, 2)}× the verify alone; ` +
          `a good one also writes its session row and reads the account). An unknown address takes ` +
          `${fmt(paired, 2)}× a wrong password's time (the median of each round's ratio, the two sent back to back): it pays ` +
          'for a password check too, so timing does not tell whether an address has an account.',
        '',
        `Reads: ${ctx.rounds} interleaved rounds of ${ctx.seconds} s, 10 connections; the review queue holds ${cards.length} demo cards.`,
        '',
        '| target | req/s | p50 ms | p99 ms | server CPU µs per request | errors + non-2xx |',
        '|---|---:|---:|---:|---:|---:|',
        row(API, api),
        row(DASH, dash),
        '',
        `The dashboard read serves **${pct(dash.rps / api.rps)}** of the bearer read's requests a second, at ` +
          `${cpuMultiple(dash, api, 2) ?? 'an unmeasured multiple of'} its CPU per request (target: within 1.2×): a session is`,
        'remembered by the process as a bearer principal is, trusted on the revocation mark the limiter reads anyway',
        '(src/tokens/auth-guard.ts).',
      ].join('\n'),
    };
  } finally {
    await stop(server);
  }
}
