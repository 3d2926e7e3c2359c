import { describe, expect } from 'vitest';

// These tests spawn real processes (tsx start-up, migrations): slow on a loaded 2-core machine.
const SLOW = 120_000;
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { run, runTs } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';

const admin = (env: TestEnv, ...args: string[]) => runTs(['bin/admin.ts', ...args], envFor(env.config));

function json(out: string): Record<string, unknown> {
  const lines = out.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Record<string, unknown>;
}

describe('admin CLI', { timeout: SLOW }, () => {
  it('creates an account, mints, lists and revokes a token, and lists the audit log — one JSON object each', async ({ env }) => {
    const created = await admin(env, 'account', 'create', '--name', 'Acme Growth');
    expect(created.code).toBe(0);
    const { account } = json(created.stdout) as { account: { id: string; name: string } };
    expect(account).toEqual({ id: expect.stringMatching(/^acct_/), name: 'Acme Growth' });

    const minted = await admin(env, 'token', 'mint', '--account', account.id, '--label', 'ci-bot', '--scopes', 'review:read,leads:read');
    expect(minted.code).toBe(0);
    const { token, tokenId } = json(minted.stdout) as { token: string; tokenId: string };
    expect(token).toMatch(/^gat_[0-9A-Za-z]{36}$/);

    const me = await env.api().get('/api/v1/me').set(auth(token));
    expect(me.status).toBe(200);
    expect(me.body.me).toMatchObject({ tokenId, label: 'ci-bot', scopes: ['review:read', 'leads:read'], account });

    const listed = json((await admin(env, 'token', 'list', '--account', account.id)).stdout) as { tokens: Array<Record<string, unknown>> };
    expect(listed.tokens).toEqual([
      {
        tokenId,
        label: 'ci-bot',
        scopes: ['review:read', 'leads:read'],
        createdAt: expect.any(Number),
        lastUsedAt: expect.any(Number),
        revokedAt: null,
      },
    ]);
    expect(JSON.stringify(listed)).not.toContain(token);

    expect(json((await admin(env, 'token', 'revoke', '--token-id', tokenId)).stdout)).toEqual({ ok: true });
    expect((await env.api().get('/api/v1/me').set(auth(token))).status).toBe(401);

    const audit = json((await admin(env, 'audit', 'list', '--account', account.id, '--limit', '10')).stdout) as {
      entries: Array<Record<string, unknown>>;
    };
    expect(audit.entries.map((e) => e.route)).toEqual(['token revoke', 'token mint']);
    expect(audit.entries[0]).toMatchObject({ actor: 'admin', targetId: tokenId, status: 200, at: expect.any(Number) });
  });

  it('answers a refusal with one JSON object on stderr and exit 1', async ({ env }) => {
    const cases: Array<[string[], RegExp]> = [
      [['token', 'mint', '--account', 'acct_missing', '--label', 'x', '--scopes', 'review:read'], /^not found$/],
      [['token', 'mint', '--account', 'acct_x', '--label', 'x', '--scopes', 'root'], /unknown scope root/],
      [['token', 'revoke', '--token-id', 'tok_nope'], /^not found$/],
      [['account', 'create'], /--name is required/],
      [['account', 'create', '--name', 'x', '--bogus', 'y'], /bogus/],
      [['audit', 'list', '--account', 'acct_x', '--limit', '0'], /--limit must be an integer from 1 to 1000/],
      [['frobnicate'], /unknown command/],
    ];
    // Each refusal in a process of its own, all at once: they share nothing.
    const outs = await Promise.all(cases.map(([args]) => admin(env, ...args)));
    for (const [i, [args, message]] of cases.entries()) {
      const out = outs[i]!;
      expect(out.code, args.join(' ')).toBe(1);
      expect(out.stdout).toBe('');
      const err = json(
        out.stderr
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .join('\n'),
      );
      expect(Object.keys(err)).toEqual(['error']);
      expect(String(err.error)).toMatch(message);
    }
  });

  it('keeps stdout to exactly one JSON object through `npm run --silent admin`', async ({ env }) => {
    const out = await run('npm', ['run', '--silent', 'admin', '--', 'account', 'create', '--name', 'Via npm'], envFor(env.config));
    expect(out.code).toBe(0);
    expect(json(out.stdout)).toMatchObject({ account: { name: 'Via npm' } });
  });
});
