import { createDecipheriv, randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { runAdmin } from '../../src/admin/commands.js';
import { connectProvider, openConnection } from '../../src/channels/connections.js';
import { type ConfigError, loadConfig, type Config } from '../../src/config.js';
import { sealingProblem } from '../../src/config/sealing.js';
import { generateDkimKey } from '../../src/mail/dkim.service.js';
import { SEALED_COLUMNS } from '../../src/admin/sealed-columns.js';
import { sealedPage } from '../../src/secrets/sealed-columns.repository.js';
import { seal, unseal } from '../../src/secrets/sealed.js';
import { configWith } from '../helpers/config.js';
import { envFor } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { run, runTs } from '../helpers/processes.js';
import { row, rows } from '../helpers/rows.js';

// Provider keys and DKIM private keys are sealed under keys given from outside the database
// (SEALING_KEYS / SEALING_KEYS_FILE): a copy of the database, service_secrets included, opens none of them.

const dir = mkdtempSync(path.join(tmpdir(), 'sealing-keys-'));
const k1 = `k1:${randomBytes(32).toString('base64')}`;
const k2 = `k2:${randomBytes(32).toString('base64url')}`;
/** This file's config with SEALING_KEYS_FILE naming a file of these entries. */
function keyed(...entries: string[]): Config {
  const file = path.join(dir, `keys-${randomBytes(4).toString('hex')}`);
  writeFileSync(file, `# sealing keys, oldest first\n${entries.join('\n')}\n`);
  return configWith({ SEALING_KEYS_FILE: file });
}
const withoutKeys = configWith({});

/** Every sealed value and every service secret, as a dump of the database shows them. */
async function dumped(env: TestEnv): Promise<{ sealed: string[]; secrets: string[] }> {
  const sealed: string[] = [];
  for (const c of SEALED_COLUMNS) sealed.push(...(await sealedPage(env.deps.db, c, null, 10_000)).map((v) => v.sealed));
  return { sealed, secrets: (await rows(env, 'service_secrets').pluck('value')) as string[] };
}

/** What someone holding only the dump can do: try every secret the database holds as the AES key of every value. */
function openWithDatabaseOnly(sealed: string, secrets: string[]): string | null {
  const parts = sealed.split('.');
  const [iv, tag, data] = parts.slice(-3) as [string, string, string];
  for (const s of secrets) {
    const key = Buffer.from(s, 'base64url');
    if (key.length !== 32) continue;
    try {
      const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      d.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([d.update(Buffer.from(data, 'base64url')), d.final()]).toString('utf8');
    } catch {
      // not this one
    }
  }
  return null;
}

async function sealSome(env: TestEnv, config: Config, tag: string): Promise<{ accountId: string; domain: string }> {
  const { accountId } = await env.tenant();
  const input = { accountId, kind: 'network', transport: 'http', url: 'http://127.0.0.1:9', key: `provider-key-${tag}` };
  await connectProvider(env.deps.db, config.sealing, input, Date.now());
  const domain = `${tag}.example.com`;
  await generateDkimKey(env.deps.db, config.sealing, domain, 's1');
  return { accountId, domain };
}

const reseal = (env: TestEnv, config: Config) => runAdmin(['secrets', 'reseal'], { config, db: env.deps.db });

describe('sealing keys from outside the database', () => {
  it('seals under the key file: a dump of the database opens nothing (service_secrets, pg_dump); the key file opens it', async ({
    env,
  }) => {
    const config = keyed(k1);
    const { accountId } = await sealSome(env, config, 'dump');
    const { sealed, secrets } = await dumped(env);
    const ours = sealed.filter((s) => s.startsWith('v2.k1.'));
    expect(ours.length).toBe(2);
    for (const s of ours) {
      expect(openWithDatabaseOnly(s, secrets)).toBeNull();
      await expect(unseal(env.deps.db, withoutKeys.sealing, s)).rejects.toThrow(/under key k1/);
      expect((await unseal(env.deps.db, config.sealing, s)).length).toBeGreaterThan(0);
    }
    expect((await openConnection(env.deps.db, config.sealing, accountId, 'network'))?.key).toBe('provider-key-dump');
    // The whole database as pg_dump writes it holds neither secret in clear.
    const dump = await run('pg_dump', ['--data-only', env.config.databaseUrl], {});
    expect(dump.code).toBe(0);
    expect(dump.stdout).toContain('v2.k1.');
    expect(dump.stdout).not.toContain('provider-key-dump');
    expect(dump.stdout).not.toContain('PRIVATE KEY');
  });

  it('rotates: k1, then k1,k2 (old values open), reseal moves all to k2 and drops the database key, then k2 alone opens all', async ({
    env,
  }) => {
    // A value sealed before outside keys (the database's own key): a copy of the database opens it.
    const legacy = await sealSome(env, withoutKeys, 'legacy');
    const before = await dumped(env);
    const legacyValue = before.sealed.find((s) => s.startsWith('v1.'))!;
    expect(openWithDatabaseOnly(legacyValue, before.secrets)).not.toBeNull();

    const first = await sealSome(env, keyed(k1), 'rotation');
    const both = keyed(k1, k2);
    // Added k2: values under k1 and under the database key still open; new values are sealed under k2.
    expect((await openConnection(env.deps.db, both.sealing, first.accountId, 'network'))?.key).toBe('provider-key-rotation');
    expect((await openConnection(env.deps.db, both.sealing, legacy.accountId, 'network'))?.key).toBe('provider-key-legacy');
    expect(await seal(env.deps.db, both.sealing, 'x')).toMatch(/^v2\.k2\./);

    const out = await reseal(env, both);
    expect(out).toMatchObject({ key: 'k2', changedMeanwhile: 0, databaseKeyRemoved: true });
    expect(out.resealed as number).toBeGreaterThanOrEqual(4);
    const after = await dumped(env);
    expect(after.sealed.every((s) => s.startsWith('v2.k2.'))).toBe(true);
    expect(after.secrets.length).toBe(before.secrets.length - 1);
    for (const s of after.sealed) expect(openWithDatabaseOnly(s, after.secrets)).toBeNull();
    // A second run has nothing to do.
    expect(await reseal(env, both)).toMatchObject({ resealed: 0, current: after.sealed.length, databaseKeyRemoved: false });

    // k1 removed from the file: everything still opens under k2 alone.
    const onlyK2 = keyed(k2);
    for (const a of [legacy, first])
      expect((await openConnection(env.deps.db, onlyK2.sealing, a.accountId, 'network'))?.key).toMatch(/^provider-key-/);
    for (const s of after.sealed) await expect(unseal(env.deps.db, onlyK2.sealing, s)).resolves.toBeTruthy();
    // Without k2 nothing opens.
    for (const s of after.sealed) await expect(unseal(env.deps.db, keyed(k1).sealing, s)).rejects.toThrow(/under key k2/);
  });

  it('refuses to reseal without an outside key, and to seal under the database key in production', async ({ env }) => {
    await expect(reseal(env, withoutKeys)).rejects.toThrow(/secrets reseal needs SEALING_KEYS or SEALING_KEYS_FILE/);
    const production = configWith({ NODE_ENV: 'production' });
    await expect(seal(env.deps.db, production.sealing, 'x')).rejects.toThrow(/set SEALING_KEYS or SEALING_KEYS_FILE/);
    await expect(
      runAdmin(['mail', 'dkim', 'generate', '--domain', 'prod.example.com', '--selector', 's1'], { config: production, db: env.deps.db }),
    ).rejects.toThrow(/SEALING_KEYS/);
    expect(await row(env, 'dkim_keys', { domain: 'prod.example.com' })).toBeUndefined();
  });

  it('names the setting and the rule when a key is malformed, both settings are set, or the file cannot be read', () => {
    const problems = (vars: Record<string, string>) => {
      try {
        loadConfig(vars);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(loadConfig({ SEALING_KEYS: `${k1},${k2}` }).sealing.keys.map((k) => k.id)).toEqual(['k1', 'k2']);
    for (const bad of ['k1', `k1:${randomBytes(16).toString('base64')}`, `bad id:${randomBytes(32).toString('base64')}`])
      expect(problems({ SEALING_KEYS: bad })).toEqual([expect.stringMatching(/^SEALING_KEYS must be id:key entries/)]);
    expect(problems({ SEALING_KEYS: `${k1},${k1}` })).toEqual(['SEALING_KEYS names the key id k1 twice']);
    expect(problems({ SEALING_KEYS_FILE: path.join(dir, 'missing') })).toEqual(['SEALING_KEYS_FILE cannot be read (ENOENT)']);
    const file = path.join(dir, 'one');
    writeFileSync(file, `${k1}\n`);
    expect(problems({ SEALING_KEYS: k2, SEALING_KEYS_FILE: file })).toEqual(['set SEALING_KEYS or SEALING_KEYS_FILE, not both']);
    expect(sealingProblem(loadConfig({ NODE_ENV: 'production' }))).toMatch(/^NODE_ENV=production needs SEALING_KEYS or SEALING_KEYS_FILE/);
    expect(sealingProblem(loadConfig({ NODE_ENV: 'production', SEALING_KEYS_FILE: file }))).toBeNull();
    expect(sealingProblem(loadConfig({}))).toBeNull();
  });
});

describe('start-up in production', { timeout: 120_000 }, () => {
  it('stops with one configuration line when only the database key exists, and goes on with a key file', async ({ env }) => {
    // DATABASE_URL on a closed port: a process that went on past the check says Postgres is not reachable.
    const base = { ...envFor(env.config), NODE_ENV: 'production', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' };
    const refused = await runTs(['bin/start.ts', 'api'], base);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^configuration: NODE_ENV=production needs SEALING_KEYS or SEALING_KEYS_FILE: /),
    ]);
    const file = path.join(dir, 'start');
    writeFileSync(file, `${k1}\n`);
    const keyedStart = await runTs(['bin/start.ts', 'api'], { ...base, SEALING_KEYS_FILE: file });
    expect(keyedStart.code).toBe(1);
    expect(keyedStart.stderr).toMatch(/Postgres is not reachable/);
    expect(keyedStart.stderr).not.toMatch(/SEALING_KEYS/);
  });
});
