import request from 'supertest';
import { describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { adminActor } from '../../src/audit/audit.service.js';
import { changeRole } from '../../src/people/people.service.js';
import { dashboardOrigin, signedIn, signInAs } from '../helpers/dashboard.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { agedSessions } from '../helpers/aged-rows.js';
import { waitFor } from '../helpers/processes.js';
import { sessionsOf } from '../helpers/rows.js';

// API processes remember the sessions they resolved (as they remember tokens); an ended session must still
// be refused by every process from the very next request.
type App = ReturnType<typeof createApp>;
const get = (app: App, cookie: string, path = '/dashboard/api/v1/review') => request(app).get(path).set('Cookie', cookie);

/** Two API processes' worth of memory: each app builds its own; both read the session twice, so both remember it. */
async function remembering(env: TestEnv, cookie: string): Promise<App[]> {
  const apps = [env.app, createApp(env.deps)];
  for (const app of apps) for (let i = 0; i < 2; i++) expect((await get(app, cookie)).status).toBe(200);
  return apps;
}

describe('remembered sessions', () => {
  it('answer from memory: a row changed behind the service is not read again while no mark says so', async ({ env }) => {
    const who = await signedIn(env);
    const [, other] = await remembering(env, who.cookie);
    // Ended in Postgres with no mark (what only a hand edit does): the process that remembered it keeps it.
    await agedSessions(env, who.personId, { ended_at: Date.now() });
    expect((await get(other!, who.cookie)).status).toBe(200);
    // A process that never saw it asks Postgres.
    expect((await get(createApp(env.deps), who.cookie)).status).toBe(401);
  });

  it('are refused by another process at once after a sign-out in one', async ({ env }) => {
    const who = await signedIn(env);
    const [first, other] = await remembering(env, who.cookie);
    const out = await request(first!)
      .delete('/dashboard/api/session')
      .set('Cookie', who.cookie)
      .set('Origin', dashboardOrigin(env))
      .set('X-CSRF-Token', who.csrfToken);
    expect(out.status).toBe(204);
    const res = await get(other!, who.cookie);
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: 'Sign in to use the dashboard.' });
  });

  it('are refused everywhere after sign-out-everywhere or the person being removed', async ({ env }) => {
    const owner = await signedIn(env);
    const member = await signedIn(env, { accountId: owner.accountId, role: 'member' });
    const second = await signInAs(env, owner);
    const apps = await remembering(env, owner.cookie);
    await remembering(env, member.cookie);
    expect((await second.request('post', '/dashboard/api/session/sign-out-everywhere')).status).toBe(204);
    for (const app of apps) expect((await get(app, owner.cookie)).status).toBe(401);

    const again = await signInAs(env, owner);
    const memberApps = [env.app, createApp(env.deps)];
    for (const app of memberApps) expect((await get(app, member.cookie)).status).toBe(200);
    expect((await again.request('delete', `/dashboard/api/people/${member.personId}`)).status).toBe(204);
    for (const app of memberApps) expect((await get(app, member.cookie)).status).toBe(401);
  });

  it('take a new role at once in every process that remembered the person', async ({ env }) => {
    const owner = await signedIn(env);
    const colleague = await signedIn(env, { accountId: owner.accountId, role: 'owner' });
    const apps = await remembering(env, colleague.cookie);
    for (const app of apps) expect((await get(app, colleague.cookie, '/dashboard/api/hooks')).status).toBe(200);
    await changeRole(env.deps, adminActor(owner.accountId, 'person role'), owner.accountId, colleague.personId, 'member');
    for (const app of apps) {
      expect((await get(app, colleague.cookie, '/dashboard/api/hooks')).status).toBe(403);
      expect((await get(app, colleague.cookie, '/dashboard/api/session')).body.person.role).toBe('member');
    }
  });

  it('end when idle past the idle lifetime, and requests move last-seen forward in Postgres', async ({ env }) => {
    const idleMs = 1_500;
    const app = createApp({ ...env.deps, config: { ...env.config, dashboard: { ...env.config.dashboard, sessionIdleMs: idleMs } } });
    const who = await signedIn(env);
    const lastSeen = async () => Number((await sessionsOf(env, who.personId))[0]!.last_seen_at);
    const signedInAt = await lastSeen();
    // Used again after a quarter of the idle lifetime: the last-seen time is written (in a batch, within a second).
    let seen = signedInAt;
    await waitFor(
      async () => {
        const res = await get(app, who.cookie);
        if (res.status !== 200) return true;
        seen = await lastSeen();
        return seen > signedInAt;
      },
      'a request to move last-seen forward in Postgres',
      15_000,
    );
    expect(seen).toBeGreaterThan(signedInAt);
    // Left alone past the idle lifetime (polled on the clock: any request would be activity), it is refused.
    expect((await get(app, who.cookie)).status).toBe(200);
    const last = Date.now();
    // Idle is the thing under test: no request until the lifetime has passed on the clock.
    while (Date.now() - last <= idleMs) await new Promise((r) => setTimeout(r, 100));
    const status = (await get(app, who.cookie)).status;
    expect(status).toBe(401);
  });
});
