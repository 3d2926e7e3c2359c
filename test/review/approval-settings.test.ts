import { describe, expect } from 'vitest';
import { approvalSettingsView } from '../../src/review/approval-settings.js';
import { approvalMode, needsApproval, setApprovalMode } from '../../src/review/approval.service.js';
import { planAutoResolve, raiseTrust } from '../../src/review/trust.service.js';
import { adminCall } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';

// Approval settings per kind of work (src/review/approval-settings.ts): always ask, the trust ladder, or
// ship; what the ladder and the agent's tools read, and the ladder's state in words.

it.override('options', { env: { TRUST_AUTO_RESOLVE_AFTER: '3', TRUST_AUTO_RESOLVE_DELAY_MS: String(10 * 60_000) } });

describe('approval settings', () => {
  it('start on the trust ladder for every kind but spending, which always asks', async ({ env }) => {
    const { accountId } = await env.tenant();
    const view = await approvalSettingsView(env.deps.db, env.config, accountId);
    expect(view.map((s) => [s.kind, s.mode, s.ladder.state])).toEqual([
      ['email', 'trust_ladder', 'climbing'],
      ['sequence', 'trust_ladder', 'climbing'],
      ['network_message', 'trust_ladder', 'climbing'],
      ['blog_post', 'trust_ladder', 'climbing'],
      ['ad_test', 'trust_ladder', 'climbing'],
      ['spend', 'always_ask', 'off'],
      ['experiment', 'trust_ladder', 'climbing'],
    ]);
    expect(view[0]!.ladder.words).toBe(
      '0 of 3 approvals shipped unchanged so far (an edit or a note does not count). At 3, new emails resolve themselves ' +
        '10 minutes after they arrive unless someone acts first; a dismissal starts the count again.',
    );
  });

  it('says when the ladder is trusted, and always_ask turns its deadline off while the count is kept', async ({ env }) => {
    const { accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, accountId, 'email');
    const trusted = (await approvalSettingsView(env.deps.db, env.config, accountId))[0]!;
    expect(trusted.ladder).toMatchObject({ state: 'trusted', approvedUnchanged: 3, threshold: 3 });
    expect(trusted.ladder.words).toMatch(/^3 emails have been approved unchanged, so new ones resolve themselves 10 minutes after/);
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    expect(await planAutoResolve(env.deps.db, env.config, card)).not.toBeNull();

    await setApprovalMode(env.deps.db, accountId, 'email', 'always_ask');
    expect(await planAutoResolve(env.deps.db, env.config, card)).toBeNull();
    expect(await needsApproval(env.deps.db, accountId, 'email')).toBe(true);
    const asked = (await approvalSettingsView(env.deps.db, env.config, accountId))[0]!;
    expect(asked).toMatchObject({ mode: 'always_ask', ladder: { state: 'off', approvedUnchanged: 3 } });
    // The CLI's `required` keeps the ladder's switch as it is.
    await adminCall(env, ['settings', 'set', '--account', accountId, '--kind', 'email', '--approval', 'required']);
    expect(await approvalMode(env.deps.db, accountId, 'email')).toBe('always_ask');

    await setApprovalMode(env.deps.db, accountId, 'email', 'ship');
    expect(await needsApproval(env.deps.db, accountId, 'email')).toBe(false);
    expect(await adminCall(env, ['settings', 'get', '--account', accountId])).toMatchObject({ out: { approval: { email: 'auto' } } });
    await setApprovalMode(env.deps.db, accountId, 'email', 'trust_ladder');
    expect(await planAutoResolve(env.deps.db, env.config, card)).not.toBeNull();
  });

  it("sets a mode with the operator's `approval set`, audited, through the same rule as the dashboard", async ({ env }) => {
    const { accountId } = await env.tenant();
    const set = await adminCall(env, ['approval', 'set', '--account', accountId, '--kind', 'blog_post', '--mode', 'always_ask']);
    expect(set.out).toMatchObject({
      account: { id: accountId },
      approval: { kind: 'blog_post', mode: 'always_ask', ladder: { state: 'off' } },
    });
    expect(await approvalMode(env.deps.db, accountId, 'blog_post')).toBe('always_ask');
    expect(await rows(env, 'audit_log', { account_id: accountId, route: 'approval set' })).toHaveLength(1);
    expect(await adminCall(env, ['approval', 'set', '--account', accountId, '--kind', 'spend', '--mode', 'ship'])).toEqual({
      error: 'mode must be always_ask for spend: spending always waits for a person',
    });
    expect((await adminCall(env, ['approval', 'set', '--account', accountId, '--kind', 'fax', '--mode', 'ship'])).error).toMatch(
      /^--kind must be one of email, /,
    );
    expect((await adminCall(env, ['approval', 'set', '--account', 'acct_nope', '--kind', 'email', '--mode', 'ship'])).error).toBe(
      'not found',
    );
  });

  it('refuses to let spending go without a person, naming the field', async ({ env }) => {
    const { accountId } = await env.tenant();
    for (const mode of ['ship', 'trust_ladder'] as const) {
      await expect(setApprovalMode(env.deps.db, accountId, 'spend', mode)).rejects.toMatchObject({
        status: 400,
        error: 'mode must be always_ask for spend: spending always waits for a person',
      });
    }
    expect(await approvalMode(env.deps.db, accountId, 'spend')).toBe('always_ask');
  });
});
