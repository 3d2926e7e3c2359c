import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { totpCode } from '../../src/people/totp.js';
import { dashboardOrigin, freshEmail, PASSWORD, signedIn, signInAs, signInRequest } from '../helpers/dashboard.js';
import type { TestEnv } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { expiredRows } from '../helpers/aged-rows.js';
import { row } from '../helpers/rows.js';
import { until } from '../helpers/processes.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';

it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }));

const CODE_REQUIRED = { error: 'Enter the code from your authenticator app.', codeRequired: true };

/** Signs a person in and turns TOTP on through the routes; the secret and the recovery codes. */
async function withTotp(env: TestEnv) {
  const who = await signedIn(env);
  const begun = await who.request('post', '/dashboard/api/totp');
  expect(begun.status).toBe(200);
  const secret = String(begun.body.secret);
  expect(begun.body.otpauthUrl).toMatch(/^otpauth:\/\/totp\/Growth%20Agent:.*secret=/);
  expect(begun.body.qrSvg).toMatch(/^<svg[\s\S]*<\/svg>\s*$/);
  // Pending until confirmed: sign-in still needs no code.
  await signInAs(env, who);
  const wrong = await who.request('post', '/dashboard/api/totp/confirm', { code: '000000' === totpCode(secret) ? '111111' : '000000' });
  expect(wrong.status).toBe(400);
  const confirmed = await who.request('post', '/dashboard/api/totp/confirm', { code: totpCode(secret) });
  expect(confirmed.status).toBe(200);
  const recoveryCodes = confirmed.body.recoveryCodes as string[];
  expect(recoveryCodes).toHaveLength(10);
  expect(new Set(recoveryCodes).size).toBe(10);
  return { ...who, secret, recoveryCodes };
}

describe('TOTP', () => {
  it('asks for a code once on; signs in with the current code, and never twice with the same one', async ({ env }) => {
    const who = await withTotp(env);
    const session = await who.request('get', '/dashboard/api/session');
    expect(session.body.person.totpEnabled).toBe(true);
    const noCode = await signInRequest(env, { email: who.email, password: PASSWORD });
    expect(noCode.status).toBe(401);
    expect(noCode.body).toEqual(CODE_REQUIRED);
    expect(noCode.headers['set-cookie']).toBeUndefined();
    // The confirming code's step is spent too; the next step's code signs in once.
    const next = totpCode(who.secret, Date.now() + 30_000);
    expect((await signInRequest(env, { email: who.email, password: PASSWORD, code: next })).status).toBe(200);
    const replay = await signInRequest(env, { email: who.email, password: PASSWORD, code: next });
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual(CODE_REQUIRED);
    // A code never helps a wrong password: the answer is the password's.
    const wrongPassword = await signInRequest(env, {
      email: who.email,
      password: 'wrong password 1',
      code: totpCode(who.secret, Date.now() + 60_000),
    });
    expect(wrongPassword.body).toEqual({ error: 'Email or password is wrong.' });
  });

  it('signs in with a recovery code, once', async ({ env }) => {
    const who = await withTotp(env);
    const code = who.recoveryCodes[3]!;
    expect((await signInRequest(env, { email: who.email, password: PASSWORD, code })).status).toBe(200);
    const again = await signInRequest(env, { email: who.email, password: PASSWORD, code });
    expect(again.status).toBe(401);
    expect(again.body).toEqual(CODE_REQUIRED);
    // Typed without its dash, another one works.
    expect((await signInRequest(env, { email: who.email, password: PASSWORD, code: who.recoveryCodes[4]!.replace('-', '') })).status).toBe(
      200,
    );
    // Only hashes are kept.
    const person = await row(env, 'people', { id: who.personId });
    expect(person.recovery_code_hashes).toHaveLength(8);
    expect(JSON.stringify(person)).not.toContain(who.recoveryCodes[0]);
    expect(JSON.stringify(person)).not.toContain(who.secret);
  });

  it('turns off only with the password', async ({ env }) => {
    const who = await withTotp(env);
    expect((await who.request('delete', '/dashboard/api/totp', { password: 'not my password' })).status).toBe(403);
    expect((await who.request('delete', '/dashboard/api/totp', { password: PASSWORD })).status).toBe(204);
    expect((await signInRequest(env, { email: who.email, password: PASSWORD })).status).toBe(200);
  });
});

/** The reset link mailed to `to` (the newest), waited for. */
async function resetToken(smtp: TestSmtp, to: string, nth = 1): Promise<string> {
  const raw = await until(async () => smtp.received.filter((m) => m.to.includes(to))[nth - 1]?.raw);
  const text = (await simpleParser(raw)).text ?? '';
  return /\/dashboard\/password-resets\/([0-9A-Za-z]{43})/.exec(text)![1]!;
}

const askReset = (env: TestEnv, email: string) =>
  env.api().post('/dashboard/api/password-resets').set('Origin', dashboardOrigin(env)).send({ email });
const reset = (env: TestEnv, token: string, password: string) =>
  env.api().post(`/dashboard/api/password-resets/${token}`).set('Origin', dashboardOrigin(env)).send({ password });

describe('password reset', () => {
  it('answers 202 {} whether or not a person holds the address, and mails only a person', async ({ env, smtp }) => {
    const who = await signedIn(env);
    const nobody = freshEmail('nobody');
    const known = await askReset(env, who.email);
    const unknown = await askReset(env, nobody);
    for (const res of [known, unknown]) {
      expect(res.status).toBe(202);
      expect(res.body).toEqual({});
    }
    expect(known.headers['content-length']).toBe(unknown.headers['content-length']);
    await resetToken(smtp, who.email);
    // The known address's mail came; ask once more for a known one and see that nobody's never does.
    await askReset(env, who.email);
    await resetToken(smtp, who.email, 2);
    expect(smtp.received.filter((m) => m.to.includes(nobody))).toEqual([]);
  });

  it('sets a new password once by its link, ending every session; the old password stops working', async ({ env, smtp }) => {
    const who = await signedIn(env);
    const other = await signInAs(env, who);
    await askReset(env, who.email);
    const token = await resetToken(smtp, who.email);
    expect((await reset(env, token, 'short')).status).toBe(400);
    const done = await reset(env, token, 'a brand new passphrase');
    expect(done.status).toBe(200);
    expect(done.body).toEqual({});
    expect((await who.request('get', '/dashboard/api/session')).status).toBe(401);
    expect((await other.request('get', '/dashboard/api/session')).status).toBe(401);
    expect((await reset(env, token, 'yet another passphrase')).status).toBe(404);
    expect((await signInRequest(env, { email: who.email, password: PASSWORD })).status).toBe(401);
    expect((await signInRequest(env, { email: who.email, password: 'a brand new passphrase' })).status).toBe(200);
  });

  it('refuses an expired link and an unknown one (404)', async ({ env, smtp }) => {
    const who = await signedIn(env);
    await askReset(env, who.email);
    const token = await resetToken(smtp, who.email);
    await expiredRows(env, 'password_resets', { person_id: who.personId });
    expect((await reset(env, token, 'a brand new passphrase')).status).toBe(404);
    expect((await reset(env, 'A'.repeat(43), 'a brand new passphrase')).status).toBe(404);
    expect((await signInRequest(env, { email: who.email, password: PASSWORD })).status).toBe(200);
  });
});
