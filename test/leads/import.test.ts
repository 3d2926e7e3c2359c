import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect } from 'vitest';
import { addToBlocklist } from '../../src/blocklist/blocklist.service.js';
import { parseMapping } from '../../src/leads/import-csv.js';
import { sweepImports } from '../../src/leads/import-jobs.js';
import { importContacts, previewImport } from '../../src/leads/import.service.js';
import { importsRepository } from '../../src/leads/imports.repository.js';
import { leadsImport } from '../../src/jobs/maintenance.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { adminCall } from '../helpers/env.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';

const FIXTURE = join(import.meta.dirname, '..', 'fixtures', 'leads', 'contacts-import.csv');
const MAP = 'email=Email,name=Full name,company=Company,domain=Website,vertical=Industry,archetype=Persona,tags=Labels';

/** An account whose block list holds blocked.example and that already has existing.example with old@existing.example. */
async function accountWithHistory(env: TestEnv) {
  const { accountId } = await env.tenant();
  await addToBlocklist(env.deps.db, accountId, ['blocked.example'], 'customer', null);
  await buildLead(env.deps.db, accountId, { domain: 'existing.example', contacts: [{ email: 'old@existing.example' }] });
  return accountId;
}

const EXPECTED_REJECTED = [
  { line: 4, reason: 'email "not-an-email" is not an email address' },
  { line: 5, reason: 'the row has 6 columns; the header has 7' },
  { line: 6, reason: 'ceo@blocked.example is on the block list' },
  { line: 7, reason: 'sam@sub.blocked.example is on the block list' },
  { line: 12, reason: 'tags must be at most 64 characters' },
];

describe('CSV import of contacts', () => {
  it('imports the good rows of a realistic file and lists each bad row with its line and reason', async ({ env }) => {
    const accountId = await accountWithHistory(env);
    const summary = await importContacts(env.deps.db, accountId, readFileSync(FIXTURE), parseMapping(MAP));
    expect(summary.rejected).toEqual(EXPECTED_REJECTED);
    expect(summary.duplicateRows).toEqual([
      { line: 8, reason: 'repeats line 2' },
      { line: 9, reason: 'old@existing.example is already a contact' },
      { line: 11, reason: 'existing.example is already a lead' },
    ]);
    expect({ imported: summary.imported, duplicates: summary.duplicates, processed: summary.processed }).toEqual({
      imported: 4,
      duplicates: 3,
      processed: 12,
    });

    const leads = await rows(env, 'leads', { account_id: accountId }).orderBy('domain');
    expect(leads.map((l) => [l.domain, l.source, l.company_name, l.vertical, l.archetype, l.tags])).toEqual([
      ['existing.example', null, null, null, null, []],
      ['fabrikam.example', 'customer_import', null, 'Manufacturing', null, []],
      ['northwind.example', 'customer_import', 'Northwind', 'Logistics', 'Operator', ['warm', 'q3']],
      ['wingtip.example', 'customer_import', 'Wingtip "Toys"', null, null, []],
    ]);
    const contacts = await rows(env, 'lead_contacts', { account_id: accountId }).orderBy('email');
    expect(contacts.map((c) => [c.email, c.name])).toEqual([
      ['jane@northwind.example', 'Jane Doe'],
      ['li@wingtip.example', 'Li Wei'],
      ['old@existing.example', null],
      ['raj@northwind.example', 'Raj Patel'],
    ]);

    // The same file again: every good row is now a duplicate, nothing new is written.
    const again = await importContacts(env.deps.db, accountId, readFileSync(FIXTURE), parseMapping(MAP));
    expect({ imported: again.imported, duplicates: again.duplicates, rejected: again.rejected }).toEqual({
      imported: 0,
      duplicates: 7,
      rejected: EXPECTED_REJECTED,
    });
  });

  it('writes nothing when the upload is cut short, even after thousands of good rows', async ({ env }) => {
    const accountId = await accountWithHistory(env);
    async function* cut() {
      yield 'Email,Full name\n';
      for (let i = 0; i < 3_000; i++) yield `person${i}@cut${i % 50}.example,Person ${i}\n`;
      throw new Error('the client went away');
    }
    await expect(importContacts(env.deps.db, accountId, Readable.from(cut()), parseMapping('email=Email,name=Full name'))).rejects.toThrow(
      'the client went away',
    );
    expect(await rows(env, 'leads', { account_id: accountId }).count('* as n')).toEqual([{ n: 1 }]);
    expect(await rows(env, 'lead_contacts', { account_id: accountId }).count('* as n')).toEqual([{ n: 1 }]);
  });

  it('previews the first rows as they would be imported, each with its problem, and writes nothing', async ({ env }) => {
    const accountId = await accountWithHistory(env);
    const { rows: preview } = await previewImport(env.deps.db, accountId, readFileSync(FIXTURE), parseMapping(MAP), 8);
    expect(preview.map((r) => [r.line, r.problem?.kind ?? 'new'])).toEqual([
      [2, 'new'],
      [3, 'new'],
      [4, 'rejected'],
      [5, 'rejected'],
      [6, 'rejected'],
      [7, 'rejected'],
      [8, 'duplicate'],
      [9, 'duplicate'],
    ]);
    expect(preview[0]!.contact).toEqual({
      email: 'jane@northwind.example',
      domain: 'northwind.example',
      name: 'Jane Doe',
      company: 'Northwind',
      vertical: 'Logistics',
      archetype: 'Operator',
      tags: ['warm', 'q3'],
    });
    expect(await rows(env, 'leads', { account_id: accountId }).count('* as n')).toEqual([{ n: 1 }]);
  });

  it('refuses a mapping naming a column the header lacks, or no email or domain, before reading a row', async ({ env }) => {
    const accountId = await accountWithHistory(env);
    await expect(importContacts(env.deps.db, accountId, readFileSync(FIXTURE), parseMapping('email=E-mail'))).rejects.toThrow(
      /map names column "E-mail" for email, which the file's header does not have/,
    );
    await expect(importContacts(env.deps.db, accountId, readFileSync(FIXTURE), parseMapping('name=Full name'))).rejects.toThrow(
      'map must name a column for email or for domain',
    );
    expect(() => parseMapping('phone=Phone')).toThrow('map has unknown field phone');
  });

  it('runs as the operator verb `leads import`, printing the summary', async ({ env }) => {
    const accountId = await accountWithHistory(env);
    const { out, error } = await adminCall(env, ['leads', 'import', '--account', accountId, '--file', FIXTURE, '--map', MAP]);
    expect(error).toBeUndefined();
    expect(out).toMatchObject({ imported: 4, duplicates: 3, rejected: EXPECTED_REJECTED });
    const audit = await rows(env, 'audit_log', { account_id: accountId, route: 'leads import' });
    expect(audit).toHaveLength(1);
    expect((await adminCall(env, ['leads', 'import', '--account', accountId, '--file', '/nonexistent.csv'])).error).toBe(
      '--file /nonexistent.csv is not a readable file',
    );
  });

  it('queues again an import whose job was lost, and gives up one unfinished an hour after its upload', async ({ env }) => {
    const accountId = await accountWithHistory(env);
    const repo = importsRepository(env.deps.db);
    const now = Date.now();
    await repo.insert({ id: 'imp_lost', accountId, mapping: null, csv: readFileSync(FIXTURE), createdBy: null, at: now - 5 * 60_000 });
    await repo.insert({ id: 'imp_old', accountId, mapping: null, csv: readFileSync(FIXTURE), createdBy: null, at: now - 2 * 60 * 60_000 });
    await repo.insert({ id: 'imp_fresh', accountId, mapping: null, csv: readFileSync(FIXTURE), createdBy: null, at: now });
    expect(await sweepImports(env.deps, now)).toEqual({ requeued: 1, failed: 1 });
    const queue = env.deps.queues.get(leadsImport.queue)!;
    expect(await pendingJob(queue, leadsImport.key({ accountId, importId: 'imp_lost' }))).toBeDefined();
    expect(await pendingJob(queue, leadsImport.key({ accountId, importId: 'imp_fresh' }))).toBeUndefined();
    expect(await repo.find(accountId, 'imp_old')).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/did not finish within an hour/),
    });
    // A finished import is never finished again.
    expect(
      await repo.finish(
        accountId,
        'imp_old',
        { state: 'done', processed: 1, imported: 1, duplicates: 0, rejected: [], duplicateRows: [], error: null },
        now,
      ),
    ).toBe(false);
  });
});
