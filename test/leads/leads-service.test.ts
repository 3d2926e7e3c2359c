import { NO_MEASUREMENT } from '../../src/results/report/results.service.js';
import { describe, expect } from 'vitest';
import { LeadsPage } from '../../api/routes/leads.schemas.js';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { getLead, getLeadColumns, upsertLead } from '../../src/leads/leads.service.js';
import { SEED_LEAD_COUNT, seedLeadsAndEvents } from '../../src/leads/seed.js';
import { adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { countRows, leadRow, row, rows } from '../helpers/rows.js';

const admin = (env: TestEnv, argv: string[]) => adminCall(env, argv);

describe('upsertLead', () => {
  it('keys a lead by normalised domain and merges research by key, contacts by email, fields by key', async ({ env }) => {
    const { accountId } = await env.tenant();
    const db = env.deps.db;
    const first = await upsertLead(db, accountId, {
      domain: 'https://www.Acme.com/about',
      companyName: 'Acme',
      fields: { industry: 'SaaS' },
      research: [
        { key: 'why_now', reasoning: 'old', sources: [{ url: 'https://a', title: 'A' }] },
        { key: 'stack', reasoning: 'Postgres', sources: [] },
      ],
      contacts: [{ name: 'Jane', email: 'JANE@acme.com' }],
    });
    expect(first.created).toBe(true);
    const second = await upsertLead(db, accountId, {
      domain: 'acme.com.',
      status: 'drafted',
      fields: { headcount: '40' },
      research: [{ key: 'why_now', reasoning: 'new', sources: [] }],
      contacts: [
        { email: 'jane@acme.com', title: 'CTO' },
        { name: 'Raj', profileUrl: 'linkedin.com/in/Raj/' },
      ],
      draft: { subject: 'Hi', body: 'There' },
    });
    expect(second).toEqual({ id: first.id, created: false });
    const lead = await getLead(db, accountId, first.id);
    expect(lead).toMatchObject({ domain: 'acme.com', companyName: 'Acme', status: 'drafted', draft: { subject: 'Hi', body: 'There' } });
    expect(lead.research.map((r) => [r.key, r.reasoning, r.sources.length])).toEqual([
      ['why_now', 'new', 0],
      ['stack', 'Postgres', 0],
    ]);
    expect(lead.contacts.map((c) => [c.name, c.email, c.title, c.profileUrl])).toEqual([
      ['Jane', 'jane@acme.com', 'CTO', null],
      ['Raj', null, null, 'https://www.linkedin.com/in/raj'],
    ]);
    expect((await leadRow(env, first.id)).fields).toEqual({ industry: 'SaaS', headcount: '40' });
    await upsertLead(db, accountId, { domain: 'acme.com', draft: null });
    expect((await getLead(db, accountId, first.id)).draft).toBeNull();
  });

  it('refuses a value that is not a domain and a status outside the documented set', async ({ env }) => {
    const { accountId } = await env.tenant();
    await expect(upsertLead(env.deps.db, accountId, { domain: 'not a domain' })).rejects.toMatchObject({ status: 400 });
    await expect(upsertLead(env.deps.db, accountId, { domain: 'ok.com', status: 'lost' })).rejects.toMatchObject({ status: 400 });
  });

  it("runs inside a caller's transaction and rolls back with it", async ({ env }) => {
    const { accountId } = await env.tenant();
    await expect(
      env.deps.db.transaction(async (trx) => {
        await upsertLead(trx, accountId, { domain: 'rollback.com', contacts: [{ email: 'a@rollback.com' }] });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await rows(env, 'leads', { account_id: accountId })).toEqual([]);
  });
});

describe('admin columns set', () => {
  it('sets the lead columns, deduplicated in order, and they become the list form fields', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    const res = await admin(env, ['columns', 'set', '--account', accountId, '--keys', 'industry, headcount,industry,why_now']);
    expect(res.out).toEqual({ account: { id: accountId }, columns: ['industry', 'headcount', 'why_now'] });
    expect(await getLeadColumns(env.deps.db, accountId)).toEqual(['industry', 'headcount', 'why_now']);
    await upsertLead(env.deps.db, accountId, { domain: 'cols.com', fields: { industry: 'Fintech' } });
    const { leads } = LeadsPage.parse((await env.api().get('/api/v1/leads').set(auth(token))).body);
    expect(leads[0]!.fields.map((f) => f.key)).toEqual(['industry', 'headcount', 'why_now']);
    const audit = await rows(env, 'audit_log', { account_id: accountId, route: 'columns set' });
    expect(audit).toHaveLength(1);
  });

  it('refuses a bad key, an unknown account and a missing flag', async ({ env }) => {
    const { accountId } = await env.tenant();
    expect((await admin(env, ['columns', 'set', '--account', accountId, '--keys', 'ok,no spaces'])).error).toMatch(
      /^--keys has "no spaces"/,
    );
    expect(await admin(env, ['columns', 'set', '--account', 'acct_nope', '--keys', 'a'])).toEqual({ error: 'not found' });
    expect(await admin(env, ['columns', 'set', '--account', accountId])).toEqual({ error: '--keys is required' });
  });
});

describe('seedLeadsAndEvents', () => {
  it('creates about 150 leads with mixed statuses, research, contacts and a week of events, idempotently', async ({ env }) => {
    const { accountId, token } = await env.tenant(['leads:read', 'results:read']);
    const first = await seedLeadsAndEvents(env.deps.db, accountId);
    expect(first.leads).toBe(SEED_LEAD_COUNT);
    const again = await seedLeadsAndEvents(env.deps.db, accountId);
    expect(again.events).toBe(first.events);
    const statuses = await rows(env, 'leads', { account_id: accountId })
      .select('status')
      .count<{ status: string; count: string }[]>('* as count')
      .groupBy('status');
    const byStatus = Object.fromEntries(statuses.map((s) => [s.status, Number(s.count)]));
    expect(Object.values(byStatus).reduce((a, b) => a + b, 0)).toBe(SEED_LEAD_COUNT);
    expect(byStatus.replied).toBeGreaterThan(0);
    expect(Object.keys(byStatus).length).toBeGreaterThan(4);
    expect(await countRows(env, 'channel_events', { account_id: accountId })).toBe(first.events);

    let cursor: string | null = null;
    let seen = 0;
    do {
      const res = await env
        .api()
        .get('/api/v1/leads')
        .query({ limit: 40, ...(cursor ? { cursor } : {}) })
        .set(auth(token));
      const page = LeadsPage.parse(res.body);
      seen += page.leads.length;
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toBe(SEED_LEAD_COUNT);
    const replied = LeadsPage.parse((await env.api().get('/api/v1/leads').query({ status: 'replied' }).set(auth(token))).body);
    const detail = await getLead(env.deps.db, accountId, replied.leads[0]!.id);
    expect(replied.leads.every((l) => l.contact?.status === 'replied' && l.contact.replyKind === l.replyKind)).toBe(true);
    expect(detail.research.length).toBeGreaterThan(0);
    expect(detail.research[0]!.sources.length).toBeGreaterThan(0);
    expect(detail.contacts.length).toBeGreaterThan(0);
    expect(detail.replyKind).not.toBeNull();

    const results = ResultsResponse.parse(
      (
        await env
          .api()
          .get('/api/v1/results')
          .query({ since: Date.now() - 7 * 86_400_000 })
          .set(auth(token))
      ).body,
    ).results;
    // The demo week is marked and left out of /results: demo figures never mix into the account's own.
    expect(first.eventsInResults).toBe(false);
    expect(await row(env, 'channel_events', { account_id: accountId, demo: false })).toBeUndefined();
    expect(results.email.available && results.email.data.window.sent).toBe(0);
    expect(results.aeo).toEqual({ available: false, reason: NO_MEASUREMENT });
    expect(await isBlocked(env.deps.db, accountId, 'optout@harborlabs.example')).toBe(true);
  });
});
