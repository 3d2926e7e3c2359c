import { describe, expect } from 'vitest';
import { LeadSearchPage } from '../../api/dashboard/leads.schemas.js';
import { SEARCH_WALK_ROWS, searchLeads } from '../../src/leads/search.js';
import { buildLead } from '../helpers/factories.js';
import { signedIn, type SignedInPerson } from '../helpers/dashboard.js';
import { it, type TestEnv } from '../helpers/fixture.js';

/**
 * The dashboard's search over all of an account's leads (GET /dashboard/api/leads): domain, company, a contact's
 * address or name, anywhere and case ignored; the status filter; cursor paging through both of the search's plans
 * (the newest-first walk and the trigram indexes); bad input named; another account's leads never match.
 */

const search = (who: SignedInPerson, query: Record<string, string | number>) =>
  who.request(
    'get',
    `/dashboard/api/leads?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]))}`,
  );

/** Every page of a search, following nextCursor; the domains in order. */
async function allPages(who: SignedInPerson, query: Record<string, string | number>) {
  const domains: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const res = await search(who, { ...query, ...(cursor ? { cursor } : {}) });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const page = LeadSearchPage.parse(res.body);
    domains.push(...page.leads.map((l) => l.domain));
    cursor = page.nextCursor;
    if (!cursor) return domains;
  }
  throw new Error('more than 50 pages');
}

async function person(env: TestEnv) {
  return signedIn(env);
}

describe('GET /dashboard/api/leads (search)', () => {
  it('finds a lead far past the first page by domain, company, contact address or contact name, case ignored', async ({ env }) => {
    const who = await person(env);
    const db = env.deps.db;
    const old = Date.now() - 86_400_000;
    await buildLead(db, who.accountId, {
      domain: 'northwind.test',
      companyName: 'Northwind Traders',
      createdAt: old,
      contacts: [{ email: 'dana.cole@northwind.test', name: 'Dana Cole' }],
    });
    for (let i = 0; i < 60; i++) await buildLead(db, who.accountId, { domain: `co${i}.test`, contacts: [{ email: `p${i}@co${i}.test` }] });
    const first = await who.request('get', '/dashboard/api/v1/leads?limit=50').expect(200);
    expect(first.body.leads.map((l: { domain: string }) => l.domain)).not.toContain('northwind.test');

    for (const q of ['northwind', 'NORTHWIND', 'wind tr', 'dana.cole@', 'Dana Cole', 'd.test']) {
      const res = await search(who, { q });
      expect(res.status, q).toBe(200);
      expect(
        res.body.leads.map((l: { domain: string }) => l.domain),
        q,
      ).toEqual(['northwind.test']);
    }
    const found = LeadSearchPage.parse((await search(who, { q: 'dana cole' })).body).leads[0]!;
    expect(found).toMatchObject({ companyName: 'Northwind Traders', contact: { email: 'dana.cole@northwind.test', name: 'Dana Cole' } });
  });

  it("never matches another account's leads, and filters by status", async ({ env }) => {
    const who = await person(env);
    const other = await person(env);
    await buildLead(env.deps.db, other.accountId, { domain: 'globex.test', contacts: [{ email: 'kim@globex.test' }] });
    await buildLead(env.deps.db, who.accountId, { domain: 'globex-labs.test', status: 'replied' });
    await buildLead(env.deps.db, who.accountId, { domain: 'globex-partners.test', status: 'new' });
    expect(await allPages(who, { q: 'globex' })).toEqual(['globex-partners.test', 'globex-labs.test']);
    expect(await allPages(who, { q: 'kim@globex' })).toEqual([]);
    expect(await allPages(who, { q: 'globex', status: 'replied' })).toEqual(['globex-labs.test']);
    expect(await allPages(other, { q: 'globex' })).toEqual(['globex.test']);
  });

  it('pages by cursor, newest first, each match once, through the walk (many matches) and the indexes (few)', async ({ env }) => {
    const who = await person(env);
    const db = env.deps.db;
    const base = Date.now() - 3_600_000;
    const expected: string[] = [];
    for (let i = 0; i < 40; i++) {
      const domain = i % 2 === 0 ? `acme-${i}.test` : `other-${i}.test`;
      // Ties in created_at are broken by insertion order (keyset on created_at, seq).
      await buildLead(db, who.accountId, { domain, createdAt: base + Math.floor(i / 3) * 1000, contacts: [{ name: `Person ${i}` }] });
      if (i % 2 === 0) expected.unshift(domain);
    }
    // 20 of 40 match: every page of 3 is filled by the walk.
    expect(await allPages(who, { q: 'acme', limit: 3 })).toEqual(expected);
    // A match only in a contact's name, on a few leads: the walk cannot fill a page, the indexes answer.
    const nameOf = (i: number) => (i % 2 === 0 ? `acme-${i}.test` : `other-${i}.test`);
    expect(await allPages(who, { q: 'person 1', limit: 2 })).toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 1].map(nameOf));
  });

  it('takes % and _ in q literally', async ({ env }) => {
    const who = await person(env);
    await buildLead(env.deps.db, who.accountId, { domain: 'axb.test', companyName: 'A x B' });
    await buildLead(env.deps.db, who.accountId, { domain: 'a-b.test', companyName: '100% a_b' });
    expect(await allPages(who, { q: 'a_b' })).toEqual(['a-b.test']);
    expect(await allPages(who, { q: '00%' })).toEqual(['a-b.test']);
  });

  it('answers 400 naming the field: q missing, short or long, a bad status, limit or cursor, an unknown field', async ({ env }) => {
    const who = await person(env);
    const other = await person(env);
    for (let i = 0; i < 3; i++) await buildLead(env.deps.db, who.accountId, { domain: `acme${i}.test` });
    const next = (await search(who, { q: 'acme', limit: 1 })).body.nextCursor as string;
    expect(next).toEqual(expect.any(String));
    const cases: Array<[Record<string, string | number>, string]> = [
      [{}, 'q is required'],
      [{ q: '  ab ' }, 'q must be at least 3 characters'],
      [{ q: 'x'.repeat(201) }, 'q must be at most 200 characters'],
      [{ q: 'acme', status: 'nope' }, 'status must be one of'],
      [{ q: 'acme', limit: 0 }, 'limit must be an integer from 1 to 100'],
      [{ q: 'acme', limit: 101 }, 'limit must be an integer from 1 to 100'],
      [{ q: 'acme', cursor: 'junk' }, 'cursor is not valid'],
      // A cursor is signed with the account, q and status.
      [{ q: 'acme0', cursor: next }, 'cursor is not valid'],
      [{ q: 'acme', status: 'new', cursor: next }, 'cursor is not valid'],
      [{ q: 'acme', sort: 'domain' }, 'query has unknown field sort'],
    ];
    for (const [query, error] of cases) {
      const res = await search(who, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error, JSON.stringify(query)).toContain(error);
    }
    const foreign = await search(other, { q: 'acme', cursor: next });
    expect([foreign.status, foreign.body.error]).toEqual([400, 'cursor is not valid']);
  });

  it('needs a session: a bearer token is not a way in', async ({ env }) => {
    const res = await env.api().get('/dashboard/api/leads?q=acme');
    expect(res.status).toBe(401);
  });
});

describe('the search plans on a big account (EXPLAIN)', () => {
  it('walks the newest leads by index for a common q, and uses the trigram indexes for a rare one', { timeout: 120_000 }, async ({
    env,
  }) => {
    const who = await person(env);
    const db = env.deps.db;
    const N = 20_000;
    // A big account written in one statement each (20,000 upserts would take minutes); names as the leads area writes them.
    await db.raw(
      `INSERT INTO leads (id, account_id, domain, company_name, status, created_at, updated_at)
       SELECT 'lead_big_' || i, ?, (ARRAY['acme','globex','initech','hooli'])[1 + i % 4] || i || '.test', 'Company ' || i, 'new',
              ?::bigint + i, ?::bigint + i FROM generate_series(1, ?) i`,
      [who.accountId, Date.now() - N, Date.now() - N, N],
    );
    await db.raw(
      `INSERT INTO lead_contacts (id, lead_id, account_id, name, email, created_at)
       SELECT 'lc_big_' || i, 'lead_big_' || i, ?, 'Person ' || i, 'p' || i || '@mail.test', 0 FROM generate_series(1, ?) i`,
      [who.accountId, N],
    );
    // As autovacuum leaves them: statistics read, and the GIN indexes' pending lists of new entries merged.
    await db.raw('VACUUM ANALYZE leads, lead_contacts');

    const plans: string[] = [];
    const explain = async (q: string) => {
      const seen: { sql: string; bindings: unknown[] }[] = [];
      const listen = (data: { sql: string; bindings: unknown[] }) => {
        if (/FROM leads/.test(data.sql)) seen.push(data);
      };
      db.on('query', listen);
      try {
        await searchLeads(db, who.accountId, { q, status: null, limit: 50, cursor: null, cursorSecret: 's', maxBytes: 1_000_000 });
      } finally {
        db.off('query', listen);
      }
      const out = [];
      for (const s of seen.filter((x) => /LIKE/.test(x.sql))) {
        const { rows } = await db.raw(`EXPLAIN (FORMAT TEXT) ${s.sql.replace(/\$\d+/g, '?')}`, s.bindings as never[]);
        out.push(rows.map((r: { 'QUERY PLAN': string }) => r['QUERY PLAN']).join('\n'));
      }
      plans.push(...out);
      return out;
    };

    // One lead in four: the walk fills the page, through the (account, created_at, seq) index and each lead's contacts.
    const common = await explain('acme');
    expect(common).toHaveLength(1);
    expect(common[0]).toMatch(/Index Scan Backward using leads_account_id_created_at_seq_index/);
    expect(common[0]).toMatch(/lead_contacts_lead_id_seq_index/);
    expect(common[0]).not.toMatch(/Seq Scan/);

    // One lead: the walk of SEARCH_WALK_ROWS finds less than a page, and the trigram indexes answer.
    const rare = await explain('p12345@');
    expect(rare).toHaveLength(2);
    expect(rare[1]).toMatch(/Bitmap Index Scan on leads_search_text/);
    expect(rare[1]).toMatch(/Bitmap Index Scan on lead_contacts_search_text/);
    expect(rare[1]).not.toMatch(/Seq Scan/);
    expect(SEARCH_WALK_ROWS).toBeLessThan(N);
    const res = await search(who, { q: 'p12345@' });
    expect(res.body.leads.map((l: { domain: string }) => l.domain)).toEqual(['globex12345.test']);
  });
});
