import { describe, expect } from 'vitest';
import { createAccount } from '../../src/accounts/accounts.service.js';
import { adminActor } from '../../src/audit/audit.service.js';
import { createPerson } from '../../src/people/people.service.js';
import { newSecret, secretHash } from '../../src/people/secrets.js';
import { startSession } from '../../src/people/sessions.service.js';
import { freshEmail, PASSWORD, sessionCookieOf, signInRequest } from '../helpers/dashboard.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { countRows } from '../helpers/rows.js';
import { smtpEnv } from '../helpers/smtp-server.js';

it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }));

/** A person in a new account; with `from`, a session of theirs already started from that network and device. */
async function person(env: TestEnv, from?: { network: string; device: string }) {
  const account = await createAccount(env.deps.db, 'Northwind');
  const email = freshEmail();
  const made = await createPerson(env.deps, adminActor(account.id, 'person create'), {
    accountId: account.id,
    email,
    name: 'Bo',
    role: 'owner',
    password: PASSWORD,
  });
  const who = { accountId: account.id, personId: made.id };
  if (from) await startSession(env.deps.db, env.config, who, Date.now(), { network: from.network, deviceHash: secretHash(from.device) });
  return { email, accountId: account.id };
}

describe('sign-in alerts', () => {
  it('mail the person when neither the device nor the network was seen in their recent sessions, and only then', async ({ env, smtp }) => {
    // Known device from a new network: no alert; the same network again from a new browser: no alert.
    const device = newSecret();
    const known = await person(env, { network: '203.0.113.9', device });
    expect((await signInRequest(env, { email: known.email, password: PASSWORD }).set('Cookie', `gas_device=${device}`)).status).toBe(200);
    expect((await signInRequest(env, { email: known.email, password: PASSWORD })).status).toBe(200);
    // A first sign-in (no session to compare with): no alert.
    const first = await person(env);
    expect((await signInRequest(env, { email: first.email, password: PASSWORD })).status).toBe(200);

    // A new device and a new network: the alert.
    const other = await person(env, { network: '198.51.100.7', device: newSecret() });
    const res = await signInRequest(env, { email: other.email, password: PASSWORD }).set('User-Agent', 'Firefox/140.0');
    expect(res.status).toBe(200);
    const alert = await until(async () => smtp.received.find((m) => m.to.includes(other.email)));
    expect(alert.raw).toContain('Subject: New sign-in to your Growth Agent account');
    expect(alert.raw).toContain('Network: 127.0.0.1');
    expect(alert.raw).toContain('Browser: Firefox/140.0');
    // No secret in the mail: neither the session cookie nor the device cookie.
    for (const cookie of res.headers['set-cookie'] as unknown as string[])
      expect(alert.raw).not.toContain(cookie.split(';')[0]!.split('=')[1]!);
    expect(sessionCookieOf(res.headers['set-cookie'])).not.toBeNull();

    // Only that one mail went (the others sent nothing), and it is no review card.
    expect(smtp.received.filter((m) => m.to.includes(known.email) || m.to.includes(first.email))).toEqual([]);
    expect(await countRows(env, 'review_cards', { account_id: other.accountId })).toBe(0);
  });
});
