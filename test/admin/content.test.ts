import { describe, expect } from 'vitest';
import { adminCall, envFor } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { run, TSX } from '../helpers/processes.js';
import { row, rows } from '../helpers/rows.js';

// Spawns the real CLI (tsx start-up): slow on a loaded 2-core machine.
const SLOW = 120_000;

describe('admin CLI: content', { timeout: SLOW }, () => {
  it('sets the blog base URL with `content site-url` and prints one JSON object; mints a content:read token', async ({ env }) => {
    const t = await env.tenant();
    const out = await run(
      TSX,
      ['bin/admin.ts', 'content', 'site-url', '--account', t.accountId, '--url', 'https://acme.test/blog'],
      envFor(env.config),
    );
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout.trim())).toEqual({ accountId: t.accountId, blogBaseUrl: 'https://acme.test/blog/' });
    expect((await row(env, 'accounts', { id: t.accountId })).blog_base_url).toBe('https://acme.test/blog/');
    const audit = await rows(env, 'audit_log', { account_id: t.accountId, route: 'content site-url' });
    expect(audit).toHaveLength(1);

    const minted = await adminCall(env, ['token', 'mint', '--account', t.accountId, '--label', 'site', '--scopes', 'content:read']);
    expect(minted.out).toMatchObject({ token: expect.any(String) });
  });

  it('refuses a URL that is not http(s), a query or fragment, a missing flag and an unknown account', async ({ env }) => {
    const t = await env.tenant();
    const cases: [string[], string][] = [
      [['--account', t.accountId, '--url', 'javascript:alert(1)'], 'url must be an http(s) URL'],
      [['--account', t.accountId, '--url', 'not a url'], 'url must be an http(s) URL'],
      [['--account', t.accountId, '--url', 'https://acme.test/blog?x=1'], 'url must not have a query or a fragment'],
      [['--account', t.accountId], '--url is required'],
      [['--account', 'acct_missing', '--url', 'https://acme.test/'], 'not found'],
    ];
    for (const [flags, error] of cases) expect(await adminCall(env, ['content', 'site-url', ...flags])).toEqual({ error });
    expect((await row(env, 'accounts', { id: t.accountId })).blog_base_url).toBeNull();
  });
});
