import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { addToBlocklist } from '../../src/blocklist/blocklist.service.js';
import { buildLead } from '../helpers/factories.js';
import { dashboardOrigin, signedIn, type SignedInPerson } from '../helpers/dashboard.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';

it.override('options', { pools: ['maintenance'] });

const FIXTURE = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'leads', 'contacts-import.csv'));
const MAP = 'email=Email,name=Full name,company=Company,domain=Website,vertical=Industry,archetype=Persona,tags=Labels';

const upload = (who: SignedInPerson, csv: Buffer | string, query: Record<string, string>) =>
  who
    .request('post', `/dashboard/api/leads/imports?${new URLSearchParams(query)}`)
    .set('Content-Type', 'text/csv')
    .send(csv);

/** Polls the import until it is done or failed, within the deadline. */
async function finished(who: SignedInPerson, id: string, ms = 60_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await who.request('get', `/dashboard/api/leads/imports/${id}`);
    expect(res.status).toBe(200);
    if (res.body.import.state === 'done' || res.body.import.state === 'failed') return res.body.import;
    if (Date.now() > deadline) throw new Error(`import still ${res.body.import.state} at the deadline`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function person(env: TestEnv) {
  const who = await signedIn(env);
  await addToBlocklist(env.deps.db, who.accountId, ['blocked.example'], 'customer', null);
  await buildLead(env.deps.db, who.accountId, { domain: 'existing.example', contacts: [{ email: 'old@existing.example' }] });
  return who;
}

describe('POST /dashboard/api/leads/imports', () => {
  it('previews the first rows with their problems and writes nothing', async ({ env }) => {
    const who = await person(env);
    const res = await upload(who, FIXTURE, { map: MAP, preview: 'true', limit: '3' });
    expect(res.status).toBe(200);
    expect(res.body.rows).toEqual([
      { line: 2, contact: expect.objectContaining({ email: 'jane@northwind.example', tags: ['warm', 'q3'] }), problem: null },
      { line: 3, contact: expect.objectContaining({ email: 'raj@northwind.example', domain: 'northwind.example' }), problem: null },
      { line: 4, contact: null, problem: { kind: 'rejected', reason: 'email "not-an-email" is not an email address' } },
    ]);
    expect(await rows(env, 'lead_imports', { account_id: who.accountId })).toEqual([]);
    expect(await rows(env, 'leads', { account_id: who.accountId })).toHaveLength(1);
  });

  it('imports a realistic file as a job: good rows in, each bad row listed with its line and reason', async ({ env }) => {
    const who = await person(env);
    const res = await upload(who, FIXTURE, { map: MAP });
    expect(res.status).toBe(202);
    expect(res.body.import).toMatchObject({ state: 'queued', processed: 0, imported: 0 });
    const done = await finished(who, res.body.import.id);
    expect(done).toMatchObject({ state: 'done', total: 12, processed: 12, imported: 4, duplicates: 3, error: null });
    expect(done.rejected.map((r: { line: number }) => r.line)).toEqual([4, 5, 6, 7, 12]);
    expect(done.duplicateRows.map((r: { line: number }) => r.line)).toEqual([8, 9, 11]);
    const audit = await rows(env, 'audit_log', { account_id: who.accountId, route: '/dashboard/api/leads/imports' });
    expect(audit.map((a) => [a.target_id, a.status, a.person_id])).toEqual([[done.id, 202, who.personId]]);
    // The stored file is dropped once the import is done.
    const stored = await rows(env, 'lead_imports', { account_id: who.accountId, id: done.id }).first('csv');
    expect(stored.csv).toBeNull();
  });

  it('imports 10,000 rows with bad ones through the route as a job, counting every row and listing every bad one', async ({ env }) => {
    const who = await person(env);
    const lines = ['Email,Name,Website'];
    for (let i = 0; i < 10_000; i++) {
      if (i % 97 === 5) lines.push(`broken-${i},Bad,`);
      else if (i % 101 === 7) lines.push(`p${i}@blocked.example,Blocked,`);
      else if (i % 89 === 3 && i > 0) lines.push(`p0@c0.example,Repeat,`);
      else lines.push(`p${i}@c${Math.floor(i / 5)}.example,Person ${i},c${Math.floor(i / 5)}.example`);
    }
    const bad = lines.slice(1).filter((l) => l.startsWith('broken-')).length;
    const blocked = lines.slice(1).filter((l) => l.includes('@blocked.example')).length;
    const repeats = lines.slice(1).filter((l) => l.startsWith('p0@c0.example,Repeat')).length;
    const res = await upload(who, `${lines.join('\n')}\n`, { map: 'email=Email,name=Name,domain=Website' });
    expect(res.status).toBe(202);
    const done = await finished(who, res.body.import.id);
    expect(done).toMatchObject({
      state: 'done',
      total: 10_000,
      processed: 10_000,
      duplicates: repeats,
      imported: 10_000 - bad - blocked - repeats,
    });
    expect(done.rejected).toHaveLength(bad + blocked);
    expect(done.rejected[0]).toEqual({ line: 7, reason: 'email "broken-5" is not an email address' });
    expect(done.rejected.find((r: { reason: string }) => r.reason.includes('block list'))).toEqual({
      line: 9,
      reason: 'p7@blocked.example is on the block list',
    });
    const contacts = await rows(env, 'lead_contacts', { account_id: who.accountId }).count('* as n');
    expect(contacts).toEqual([{ n: 1 + done.imported }]);
  });

  it('refuses a mapping naming a missing column, and a body that is not CSV, storing nothing', async ({ env }) => {
    const who = await person(env);
    const missing = await upload(who, FIXTURE, { map: 'email=E-mail' });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/^map names column "E-mail" for email, which the file's header does not have/);
    const unknown = await upload(who, FIXTURE, { map: 'phone=Phone' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toBe('map has unknown field phone; the fields are email, name, company, domain, vertical, archetype, tags');
    const json = await who.request('post', '/dashboard/api/leads/imports').send({ rows: [] });
    expect(json.status).toBe(415);
    expect(json.body).toEqual({ error: 'body must be a CSV file (Content-Type text/csv)' });
    expect(await rows(env, 'lead_imports', { account_id: who.accountId })).toEqual([]);
  });

  it('stores nothing when the upload is cut before its end', async ({ env }) => {
    const who = await person(env);
    const server = env.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    try {
      const { port } = server.address() as AddressInfo;
      const head = FIXTURE.subarray(0, Math.floor(FIXTURE.length / 2));
      const socket = connect(port, '127.0.0.1');
      await new Promise((r) => socket.once('connect', r));
      socket.write(
        `POST /dashboard/api/leads/imports?map=${encodeURIComponent(MAP)} HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
          `Cookie: ${who.cookie}\r\nOrigin: ${dashboardOrigin(env)}\r\nX-CSRF-Token: ${who.csrfToken}\r\n` +
          `Content-Type: text/csv\r\nContent-Length: ${FIXTURE.length}\r\n\r\n`,
      );
      await new Promise((r) => socket.write(head, r));
      const connections = () => new Promise<number>((r) => server.getConnections((_e, n) => r(n)));
      const settle = async (want: (n: number) => boolean) => {
        const deadline = Date.now() + 5_000;
        while (!want(await connections())) {
          if (Date.now() > deadline) throw new Error('the server never saw the connection change');
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await settle((n) => n >= 1);
      socket.destroy();
      // The request is over on the server once its socket closed; nothing may have been stored.
      await settle((n) => n === 0);
      expect(await rows(env, 'lead_imports', { account_id: who.accountId })).toEqual([]);
      expect(await rows(env, 'leads', { account_id: who.accountId })).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
