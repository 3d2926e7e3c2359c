import { describe, expect } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { newId } from '../../src/ids.js';
import { importsRepository } from '../../src/leads/imports.repository.js';
import { createLogger } from '../../src/logger.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { signedIn } from '../helpers/dashboard.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';

/**
 * Finished CSV imports go after LEAD_IMPORT_RETENTION_DAYS (default 30) by when they finished, removed by the
 * maintenance pass's `leadImports` kind (docs/decisions/retention.md); an unfinished import is never removed by it,
 * and the leads an import made stay.
 */

const DAY = 86_400_000;
const log = createLogger('silent');

/** An import uploaded and, unless `state` is left out, finished `ageDays` ago. */
async function anImport(env: TestEnv, accountId: string, ageDays: number, state?: 'done' | 'failed') {
  const repo = importsRepository(env.deps.db);
  const id = newId('imp');
  const at = Date.now() - ageDays * DAY;
  await repo.insert({ id, accountId, mapping: null, csv: Buffer.from('email\na@b.test\n'), createdBy: null, at });
  if (state) {
    const result = { processed: 1, imported: state === 'done' ? 1 : 0, duplicates: 0, duplicateRows: [] };
    const rejected = state === 'done' ? [] : [{ line: 2, reason: 'a reason' }];
    await repo.finish(accountId, id, { state, ...result, rejected, error: state === 'failed' ? 'it failed' : null }, at);
  }
  return id;
}

describe('retention of finished lead imports', () => {
  it('removes done and failed imports finished more than 30 days ago, and keeps the rest and every lead', async ({ env }) => {
    const who = await signedIn(env);
    const old = [await anImport(env, who.accountId, 31, 'done'), await anImport(env, who.accountId, 45, 'failed')];
    const kept = [
      await anImport(env, who.accountId, 29, 'done'),
      await anImport(env, who.accountId, 1, 'failed'),
      // Not finished however old: the import sweep's to give up, never the retention pass's.
      await anImport(env, who.accountId, 60),
    ];
    const lead = await buildLead(env.deps.db, who.accountId, { domain: 'imported.test' });

    const pass = await runRetentionPass(env.deps, log);
    expect(pass.removed.leadImports).toBe(2);
    expect((await rows(env, 'lead_imports', { account_id: who.accountId }).pluck('id')).sort()).toEqual([...kept].sort());
    expect(await rows(env, 'leads', { id: lead.id })).toHaveLength(1);
    for (const id of old) {
      const res = await who.request('get', `/dashboard/api/leads/imports/${id}`);
      expect([res.status, res.body]).toEqual([404, { error: 'not found' }]);
    }
    expect((await who.request('get', `/dashboard/api/leads/imports/${kept[0]}`)).body.import).toMatchObject({ state: 'done' });
  });

  it('keeps finished imports forever with LEAD_IMPORT_RETENTION_DAYS=0, and reads the setting in days', async ({ env }) => {
    expect(loadConfig({}).retention.leadImportsMs).toBe(30 * DAY);
    expect(loadConfig({ LEAD_IMPORT_RETENTION_DAYS: '7' }).retention.leadImportsMs).toBe(7 * DAY);
    const forever = loadConfig({ LEAD_IMPORT_RETENTION_DAYS: '0' });
    expect(forever.retention.leadImportsMs).toBeNull();
    const who = await signedIn(env);
    const id = await anImport(env, who.accountId, 400, 'done');
    const config = { ...env.deps.config, retention: { ...env.deps.config.retention, leadImportsMs: null } };
    const pass = await runRetentionPass({ ...env.deps, config }, log);
    expect(pass.removed.leadImports ?? 0).toBe(0);
    expect(await rows(env, 'lead_imports', { id })).toHaveLength(1);
  });
});
