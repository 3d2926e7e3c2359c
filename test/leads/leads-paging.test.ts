import { describe, expect } from 'vitest';
import { LeadsPage } from '../../api/routes/leads.schemas.js';
import { newId } from '../../src/ids.js';
import { listLeads, upsertLead } from '../../src/leads/leads.service.js';
import { leadsRepository } from '../../src/leads/leads.repository.js';
import { setupTestEnv } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

/**
 * Inserts `n` leads in one statement; creation times come from a handful of values, so many tie. Straight to the
 * table: ties this many are what the paging must survive, and no service writes them.
 */
async function bulkLeads(env: TestEnv, accountId: string, n: number, base: number): Promise<string[]> {
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId('lead'),
    account_id: accountId,
    domain: `bulk${i}.example.com`,
    status: i % 7 === 0 ? 'replied' : 'contacted',
    created_at: base + Math.floor(Math.random() * 20) * 1000,
    updated_at: base,
  }));
  await env.deps.db('leads').insert(rows);
  return rows.map((r) => r.id);
}

describe('GET /leads paging', () => {
  it('pages 1,000 leads with random page sizes while new leads arrive: none lost, none repeated', async ({ env }) => {
    const { token, accountId } = await env.tenant(['leads:read']);
    const initial = await bulkLeads(env, accountId, 1000, Date.now() - 60_000);
    const seen: string[] = [];
    const arrived: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const limit = 1 + Math.floor(Math.random() * 60);
      const res = await env
        .api()
        .get('/api/v1/leads')
        .query({ limit, ...(cursor ? { cursor } : {}) })
        .set(auth(token));
      expect(res.status).toBe(200);
      const page = LeadsPage.parse(res.body);
      expect(page.leads.length).toBeLessThanOrEqual(limit);
      seen.push(...page.leads.map((l) => l.id));
      cursor = page.nextCursor;
      pages++;
      for (let k = Math.floor(Math.random() * 4); k > 0; k--) {
        arrived.push((await upsertLead(env.deps.db, accountId, { domain: `new${pages}-${k}.example.com` })).id);
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const seenSet = new Set(seen);
    expect(initial.filter((id) => !seenSet.has(id))).toEqual([]);
    expect(arrived.length).toBeGreaterThan(0);
  });

  it('orders newest created first, the same order on every walk', async ({ env }) => {
    const { accountId } = await env.tenant();
    await bulkLeads(env, accountId, 120, Date.now() - 60_000);
    const walk = async (limit: number) => {
      const out: Array<{ id: string; createdAt: number }> = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<typeof listLeads>> = await listLeads(env.deps.db, accountId, {
          status: null,
          limit,
          cursor,
          cursorSecret: await env.deps.cursorSecret(),
          maxBytes: env.config.leadsPageMaxBytes,
        });
        out.push(...page.leads);
        cursor = page.nextCursor;
      } while (cursor);
      return out;
    };
    const a = await walk(7);
    const b = await walk(100);
    expect(a.map((l) => l.id)).toEqual(b.map((l) => l.id));
    expect(a).toHaveLength(120);
    for (let i = 1; i < a.length; i++) expect(a[i]!.createdAt).toBeLessThanOrEqual(a[i - 1]!.createdAt);
  });

  it('ends a page early at the byte budget, always carries at least one lead, and still reaches every lead', async ({ env }) => {
    const { accountId } = await env.tenant();
    const big = 'x'.repeat(900);
    for (let i = 0; i < 12; i++) {
      await upsertLead(env.deps.db, accountId, { domain: `wide${i}.com`, fields: { notes: big, more: big } });
    }
    await leadsRepository(env.deps.db).setColumns(accountId, ['notes', 'more'], Date.now());
    const opts = { status: null, limit: 100, cursorSecret: await env.deps.cursorSecret(), maxBytes: 5_000 };
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: Awaited<ReturnType<typeof listLeads>> = await listLeads(env.deps.db, accountId, { ...opts, cursor });
      expect(page.leads.length).toBeGreaterThanOrEqual(1);
      expect(Buffer.byteLength(JSON.stringify(page.leads))).toBeLessThanOrEqual(5_000);
      seen.push(...page.leads.map((l) => l.id));
      cursor = page.nextCursor;
      pages++;
    } while (cursor);
    expect(new Set(seen).size).toBe(12);
    expect(pages).toBeGreaterThan(2);
    const tiny = await listLeads(env.deps.db, accountId, { ...opts, cursor: null, maxBytes: 10 });
    expect(tiny.leads).toHaveLength(1);
    expect(tiny.nextCursor).not.toBeNull();
  });

  it('applies LEADS_PAGE_MAX_BYTES to API pages (default 256 KiB)', async ({ env }) => {
    expect(env.config.leadsPageMaxBytes).toBe(262_144);
    const small = await setupTestEnv({ env: { LEADS_PAGE_MAX_BYTES: '2000' } });
    try {
      const { token, accountId } = await small.tenant(['leads:read']);
      for (let i = 0; i < 10; i++) await upsertLead(small.deps.db, accountId, { domain: `p${i}.com`, companyName: 'c'.repeat(400) });
      const res = await small.api().get('/api/v1/leads').query({ limit: 100 }).set(auth(token));
      const page = LeadsPage.parse(res.body);
      expect(page.leads.length).toBeGreaterThan(0);
      expect(page.leads.length).toBeLessThan(10);
      expect(Buffer.byteLength(JSON.stringify(page.leads))).toBeLessThanOrEqual(2000);
      expect(page.nextCursor).not.toBeNull();
    } finally {
      await small.close();
    }
  });
});
