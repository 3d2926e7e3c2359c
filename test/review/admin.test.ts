import { mintToken } from '../../src/tokens/tokens.service.js';
import { describe, expect } from 'vitest';
import { ReviewListResponse } from '../../api/routes/review.schemas.js';
import { adminCall } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

describe('settings get / set', () => {
  it('shows every kind of work needing approval by default, and changes one', async ({ env }) => {
    const { accountId } = await env.tenant();
    const first = await adminCall(env, ['settings', 'get', '--account', accountId]);
    expect(first.out).toEqual({
      account: { id: accountId },
      approval: {
        email: 'required',
        sequence: 'required',
        network_message: 'required',
        blog_post: 'required',
        ad_test: 'required',
        spend: 'required',
        experiment: 'required',
      },
      trust: {},
      autoResolveAfter: 20,
      leads: { replyStopsCompany: true },
    });
    expect((await adminCall(env, ['settings', 'set', '--account', accountId, '--kind', 'email', '--approval', 'auto'])).out).toEqual({
      account: { id: accountId },
      kind: 'email',
      approval: 'auto',
    });
    expect(((await adminCall(env, ['settings', 'get', '--account', accountId])).out!.approval as Record<string, string>).email).toBe(
      'auto',
    );
    const audit = await rows(env, 'audit_log', { account_id: accountId, route: 'settings set' });
    expect(audit).toHaveLength(1);
  });

  it('refuses to let spending run without approval, and names bad flags', async ({ env }) => {
    const { accountId } = await env.tenant();
    expect((await adminCall(env, ['settings', 'set', '--account', accountId, '--kind', 'spend', '--approval', 'auto'])).error).toMatch(
      /spending always waits/,
    );
    expect((await adminCall(env, ['settings', 'set', '--account', accountId, '--kind', 'posts', '--approval', 'auto'])).error).toMatch(
      /^--kind must be one of/,
    );
    expect((await adminCall(env, ['settings', 'set', '--account', accountId, '--kind', 'email', '--approval', 'maybe'])).error).toBe(
      '--approval must be required or auto',
    );
    expect((await adminCall(env, ['settings', 'get', '--account', 'acct_nope'])).error).toBe('not found');
  });
});

describe('seed demo', () => {
  it('creates a pending card of every kind, listed in one JSON object, and the leads demo data', async ({ env }) => {
    const { out } = await adminCall(env, ['seed', 'demo', '--new-account', 'Demo']);
    const accountId = (out!.account as { id: string }).id;
    const { token } = await mintToken(env.deps.db, env.config.tokenPrefix, { accountId, label: 'demo', scopes: ['review:read'] });
    const cards = out!.cards as Array<{ id: string; kind: string; sourceType: string; actions: string[] }>;
    const kinds = new Set(cards.map((c) => `${c.kind}/${c.sourceType}`));
    for (const k of [
      'approval/mail_draft',
      'approval/mail_reply',
      'approval/budget_change',
      'approval/outbound_setup',
      'question/agent_question',
      'choice/agent_choice',
    ]) {
      expect(kinds).toContain(k);
    }
    expect(out!.leads).toMatchObject({ leads: expect.any(Number) });
    const list = ReviewListResponse.parse((await env.api().get('/api/v1/review').set(auth(token))).body);
    expect(list.items.map((c) => c.id).sort()).toEqual(cards.map((c) => c.id).sort());
    expect(list.items.every((c) => c.status === 'pending' && c.actions.length > 0)).toBe(true);
  });
});
