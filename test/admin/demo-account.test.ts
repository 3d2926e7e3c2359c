import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { adminCall, type TestEnv } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, sendOfCard } from '../helpers/rows.js';

/**
 * Demo data lives only in a demo account (`seed demo --new-account NAME`), whose mail never reaches the
 * relay: here MAIL_TRANSPORT=smtp names a real SMTP server on loopback, and a demo card's send must land in
 * the local transport's directory instead. A real account is refused by `seed demo` and its /results stay
 * as they were.
 */
const localDir = mkdtempSync(path.join(tmpdir(), 'gas-demo-mail-'));
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), MAIL_FROM: 'Sam <sam@growthco.example>', MAIL_LOCAL_DIR: localDir },
}));
afterAll(() => rmSync(localDir, { recursive: true, force: true }));

const SCOPES = ['review:read', 'review:write', 'leads:read', 'results:read'] as const;

/** What an account holds that `seed demo` writes. */
async function holdings(env: TestEnv, accountId: string) {
  const count = async (table: string) => Number((await env.deps.db(table).where({ account_id: accountId }).count({ n: '*' }))[0]!.n);
  return {
    cards: await count('review_cards'),
    leads: await count('leads'),
    blocklist: await count('blocklist_entries'),
    events: await count('channel_events'),
  };
}

const results = async (env: TestEnv, token: string) => {
  const res = await env.api().get('/api/v1/results').set(auth(token));
  expect(res.status).toBe(200);
  // Everything but the bounds of the window and its baseline (they move with the clock between two reads).
  const { window: _window, baseline: _baseline, ...rest } = res.body.results as Record<string, { available: boolean }>;
  return rest;
};

describe('seed demo', () => {
  it('refuses a real account and writes nothing to it; its /results stay as they were', async ({ env }) => {
    const real = await env.tenant([...SCOPES]);
    const before = await results(env, real.token);
    const refused = await adminCall(env, ['seed', 'demo', '--account', real.accountId]);
    expect(refused.error).toBe(
      `account ${real.accountId} is a real account: demo data goes only into a demo account, whose mail never leaves ` +
        'the machine; make one with `seed demo --new-account NAME`',
    );
    expect(await holdings(env, real.accountId)).toEqual({ cards: 0, leads: 0, blocklist: 0, events: 0 });
    // A demo account seeded beside it changes nothing of the real one's.
    expect((await adminCall(env, ['seed', 'demo', '--new-account', 'Demo beside'])).error).toBeUndefined();
    expect(await results(env, real.token)).toEqual(before);
    expect(before.network?.available).toBe(false);
    expect(before.ads?.available).toBe(false);
    // One of the two flags, never both, never neither.
    for (const argv of [[], ['--account', real.accountId, '--new-account', 'X']]) {
      expect((await adminCall(env, ['seed', 'demo', ...argv])).error).toBe(
        'give one of --account (a demo account) or --new-account (a name)',
      );
    }
  });

  it('--new-account makes a demo account and fills it (the same JSON as before); --account fills it again', async ({ env }) => {
    const { out } = await adminCall(env, ['seed', 'demo', '--new-account', 'Demo']);
    const id = (out!.account as { id: string }).id;
    expect(Object.keys(out!).sort()).toEqual(['account', 'cards', 'leads']);
    expect(await row(env, 'accounts', { id })).toMatchObject({ name: 'Demo', demo: true });
    expect((out!.cards as unknown[]).length).toBeGreaterThan(0);
    const seeded = await holdings(env, id);
    expect(seeded.leads).toBeGreaterThan(100);
    const again = await adminCall(env, ['seed', 'demo', '--account', id]);
    expect(again.error).toBeUndefined();
    expect((again.out!.account as { id: string }).id).toBe(id);
  });
});

describe("a demo account's mail", () => {
  it('never reaches the relay MAIL_TRANSPORT names: a demo card is sent to the local directory', async ({ env, smtp }) => {
    const { out } = await adminCall(env, ['seed', 'demo', '--new-account', 'Demo sender']);
    const accountId = (out!.account as { id: string }).id;
    const { token } = await mintToken(env.deps.db, env.config.tokenPrefix, { accountId, label: 'demo', scopes: [...SCOPES] });
    const draft = (out!.cards as { id: string; sourceType: string }[]).find((c) => c.sourceType === 'mail_draft')!;
    const sent = await env.api().post(`/api/v1/review/${draft.id}/send`).set(auth(token)).send({});
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ status: 'sent', to: 'priya.raman@lumenfreight.example' });
    expect(await sendOfCard(env, draft.id)).toMatchObject({ status: 'sent' });
    const files = readdirSync(localDir).filter((f) => f.endsWith('.eml'));
    expect(files.some((f) => readFileSync(path.join(localDir, f), 'utf8').includes('To: priya.raman@lumenfreight.example'))).toBe(true);
    // A card the agent would draft on that account later goes the same way.
    const later = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'jane@realcustomer.example', draft: { subject: 'Hello', body: 'A short note.' } },
    });
    expect((await env.api().post(`/api/v1/review/${later.id}/send`).set(auth(token)).send({})).status).toBe(200);
    expect(smtp.received).toEqual([]);

    // The relay itself is live: a real account's card goes to it.
    const real = await env.tenant([...SCOPES]);
    const card = await buildCard(env.deps.db, real.accountId, 'mail_draft', {
      payload: { work: 'email', to: 'jane@realcustomer.example', draft: { subject: 'Real', body: 'A real note.' } },
    });
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(real.token)).send({})).status).toBe(200);
    expect(smtp.received.map((m) => m.to)).toEqual([['jane@realcustomer.example']]);
  });
});
