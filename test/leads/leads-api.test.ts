import { describe, expect } from 'vitest';
import { LeadLabelsResponse, LeadResponse, LeadsPage } from '../../api/routes/leads.schemas.js';
import { setLeadColumns, type upsertLead } from '../../src/leads/leads.service.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

const get = (env: TestEnv, token: string, path: string, query: Record<string, string | number> = {}) =>
  env.api().get(`/api/v1${path}`).query(query).set(auth(token));
const patch = (env: TestEnv, token: string, id: string, body: unknown) =>
  env
    .api()
    .patch(`/api/v1/leads/${id}`)
    .set(auth(token))
    .send(body as object);

async function lead(
  env: TestEnv,
  accountId: string,
  domain: string,
  extra: Parameters<typeof upsertLead>[2] extends infer I ? Partial<I> : never = {},
) {
  return (await buildLead(env.deps.db, accountId, { domain, ...extra })).id;
}

describe('GET /leads (list form)', () => {
  it('carries the configured columns, each value cut at 1,000 characters, and never drafts or research', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    await setLeadColumns(env.deps.db, accountId, ['exact', 'over', 'from_research', 'missing']);
    const id = await lead(env, accountId, 'acme.com', {
      companyName: 'Acme',
      fields: { exact: 'a'.repeat(1000), over: `${'b'.repeat(1000)}c`, ignored: 'not a column' },
      research: [{ key: 'from_research', reasoning: 'Hiring fast', sources: [{ url: 'https://acme.com/jobs', title: 'Jobs' }] }],
      draft: { subject: 'Hi', body: 'Hello' },
      contacts: [{ name: 'Jane Doe', email: 'Jane@Acme.com', title: 'CTO' }],
    });
    const res = await get(env, token, '/leads');
    expect(res.status).toBe(200);
    const { leads, nextCursor } = LeadsPage.parse(res.body);
    expect(nextCursor).toBeNull();
    expect(leads).toHaveLength(1);
    const item = leads[0]!;
    expect(item).toMatchObject({ id, domain: 'acme.com', companyName: 'Acme', status: 'new', replyKind: null, tags: [] });
    expect(item.fields).toEqual([
      { key: 'exact', value: 'a'.repeat(1000) },
      { key: 'over', value: 'b'.repeat(1000) },
      { key: 'from_research', value: 'Hiring fast' },
      { key: 'missing', value: null },
    ]);
    expect(item.contact).toMatchObject({ name: 'Jane Doe', email: 'jane@acme.com', title: 'CTO', profileUrl: null });
    expect(res.body.leads[0]).not.toHaveProperty('draft');
    expect(res.body.leads[0]).not.toHaveProperty('research');
  });

  it('cuts a column value by characters, not bytes, never splitting an emoji', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    await setLeadColumns(env.deps.db, accountId, ['notes']);
    await lead(env, accountId, 'emoji.com', { fields: { notes: '😀'.repeat(1001) } });
    const { leads } = LeadsPage.parse((await get(env, token, '/leads')).body);
    expect(Array.from(leads[0]!.fields[0]!.value!)).toHaveLength(1000);
  });

  it('filters by status, newest created first', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const now = Date.now();
    await lead(env, accountId, 'old.com', { status: 'replied', replyKind: 'interested', createdAt: now - 3000 });
    await lead(env, accountId, 'mid.com', { status: 'contacted', createdAt: now - 2000 });
    await lead(env, accountId, 'new.com', { status: 'replied', replyKind: 'question', createdAt: now - 1000 });
    const { leads } = LeadsPage.parse((await get(env, token, '/leads', { status: 'replied' })).body);
    expect(leads.map((l) => [l.domain, l.replyKind])).toEqual([
      ['new.com', 'question'],
      ['old.com', 'interested'],
    ]);
    const all = LeadsPage.parse((await get(env, token, '/leads')).body);
    expect(all.leads.map((l) => l.domain)).toEqual(['new.com', 'mid.com', 'old.com']);
  });

  it('answers 400 cursor is not valid for a tampered, foreign, garbage or other-filter cursor', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) await lead(env, accountId, `c${i}.com`, { status: 'replied' });
    const { nextCursor } = LeadsPage.parse((await get(env, token, '/leads', { limit: 1, status: 'replied' })).body);
    expect(nextCursor).toEqual(expect.any(String));
    const cursor = nextCursor!;
    const ok = await get(env, token, '/leads', { limit: 1, status: 'replied', cursor });
    expect(ok.status).toBe(200);
    const flipped = cursor.slice(0, 3) + (cursor[3] === 'x' ? 'y' : 'x') + cursor.slice(4);
    const other = await env.tenant();
    const attempts = [
      get(env, token, '/leads', { status: 'replied', cursor: flipped }),
      get(env, token, '/leads', { status: 'replied', cursor: `${cursor}x` }),
      get(env, token, '/leads', { status: 'replied', cursor: 'garbage' }),
      get(env, token, '/leads', { cursor }),
      get(env, other.token, '/leads', { status: 'replied', cursor }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'cursor is not valid' });
    }
  });

  it('answers 400 naming limit and status when they are out of range', async ({ env }) => {
    const { token } = await env.tenant();
    for (const limit of ['0', '101', '1.5', 'ten']) {
      const res = await get(env, token, '/leads', { limit });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 'limit must be an integer from 1 to 100' });
    }
    const res = await get(env, token, '/leads', { status: 'lost' });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(/^status must be one of "new"/);
  });

  it('answers 403 with requiredScope leads:read without the scope, and never shows another account', async ({ env }) => {
    const { token } = await env.tenant(['results:read']);
    const res = await get(env, token, '/leads');
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'forbidden', requiredScope: 'leads:read' });
    const a = await env.tenant();
    const b = await env.tenant();
    await lead(env, a.accountId, 'mine.com');
    expect(LeadsPage.parse((await get(env, b.token, '/leads')).body).leads).toEqual([]);
  });
});

describe('GET /leads/{id} (detail form)', () => {
  it('cuts draft subject and body at 16,000 characters and reasoning at 8,000, each at its edge', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const exact = await lead(env, accountId, 'exact.com', {
      draft: { subject: 's'.repeat(16_000), body: 'b'.repeat(16_000) },
      research: [{ key: 'why', reasoning: 'r'.repeat(8_000), sources: [] }],
    });
    const over = await lead(env, accountId, 'over.com', {
      draft: { subject: `${'s'.repeat(16_000)}!`, body: `${'b'.repeat(16_000)}!` },
      research: [{ key: 'why', reasoning: `${'r'.repeat(8_000)}!`, sources: [] }],
    });
    for (const id of [exact, over]) {
      const { lead: l } = LeadResponse.parse((await get(env, token, `/leads/${id}`)).body);
      expect(l.draft).toEqual({ subject: 's'.repeat(16_000), body: 'b'.repeat(16_000) });
      expect(l.research[0]!.reasoning).toBe('r'.repeat(8_000));
    }
  });

  it('keeps 20 sources, leaves out the 21st and any URL over 2,048 characters, and says so', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const src = (i: number) => ({ url: `https://s.example/${i}`, title: `S${i}` });
    const longOk = `https://s.example/${'u'.repeat(2_048 - 'https://s.example/'.length)}`;
    const tooLong = `${longOk}u`;
    expect(longOk).toHaveLength(2_048);
    const id = await lead(env, accountId, 'sources.com', {
      research: [
        { key: 'twenty', reasoning: 'x', sources: Array.from({ length: 20 }, (_, i) => src(i)) },
        { key: 'twentyone', reasoning: 'x', sources: Array.from({ length: 21 }, (_, i) => src(i)) },
        { key: 'edge_url', reasoning: 'x', sources: [{ url: longOk, title: 'ok' }] },
        { key: 'long_url', reasoning: 'x', sources: [src(1), { url: tooLong, title: 'too long' }, src(2)] },
      ],
    });
    const { lead: l } = LeadResponse.parse((await get(env, token, `/leads/${id}`)).body);
    const byKey = Object.fromEntries(l.research.map((r) => [r.key, r]));
    expect(byKey.twenty!.sources).toHaveLength(20);
    expect(byKey.twenty!.sourcesTruncated).toBe(false);
    expect(byKey.twentyone!.sources).toEqual(Array.from({ length: 20 }, (_, i) => src(i)));
    expect(byKey.twentyone!.sourcesTruncated).toBe(true);
    expect(byKey.edge_url!.sources).toEqual([{ url: longOk, title: 'ok' }]);
    expect(byKey.edge_url!.sourcesTruncated).toBe(false);
    expect(byKey.long_url!.sources).toEqual([src(1), src(2)]);
    expect(byKey.long_url!.sourcesTruncated).toBe(true);
  });

  it('lists research under visible columns first, then keys with no visible column', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    await setLeadColumns(env.deps.db, accountId, ['b_col', 'a_col']);
    const id = await lead(env, accountId, 'keys.com', {
      research: ['hidden_one', 'a_col', 'hidden_two', 'b_col'].map((key) => ({ key, reasoning: key, sources: [] })),
    });
    const { lead: l } = LeadResponse.parse((await get(env, token, `/leads/${id}`)).body);
    expect(l.research.map((r) => r.key)).toEqual(['b_col', 'a_col', 'hidden_one', 'hidden_two']);
  });

  it('caps contacts at 50: exactly 50 is not truncated, 51 is', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const contacts = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `P${i}`, email: `p${i}@x.com` }));
    const fifty = await lead(env, accountId, 'fifty.com', { contacts: contacts(50) });
    const fiftyOne = await lead(env, accountId, 'fiftyone.com', { contacts: contacts(51) });
    const a = LeadResponse.parse((await get(env, token, `/leads/${fifty}`)).body).lead;
    expect(a.contacts).toHaveLength(50);
    expect(a.contactsTruncated).toBe(false);
    const b = LeadResponse.parse((await get(env, token, `/leads/${fiftyOne}`)).body).lead;
    expect(b.contacts).toHaveLength(50);
    expect(b.contactsTruncated).toBe(true);
    expect(b.contacts.map((c) => c.name)).toEqual(Array.from({ length: 50 }, (_, i) => `P${i}`));
    expect(b.contacts[0]).toEqual({
      id: expect.stringMatching(/^lc_/),
      name: 'P0',
      email: 'p0@x.com',
      title: null,
      profileUrl: null,
      status: 'new',
      replyKind: null,
    });
  });

  it('gives a null draft when there is none', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const id = await lead(env, accountId, 'nodraft.com');
    const { lead: l } = LeadResponse.parse((await get(env, token, `/leads/${id}`)).body);
    expect(l).toMatchObject({ draft: null, research: [], contacts: [], contactsTruncated: false });
  });

  it("answers 404 not found for an unknown id and for another account's lead", async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const id = await lead(env, a.accountId, 'private.com');
    for (const [token, path] of [
      [b.token, `/leads/${id}`],
      [a.token, '/leads/lead_unknown'],
    ] as const) {
      const res = await get(env, token, path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
    }
  });
});

describe('PATCH /leads/{id}', () => {
  it('answers exactly { lead: { id, domain, vertical, archetype, tags } }, tags deduplicated in order', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const id = await lead(env, accountId, 'label.com');
    const res = await patch(env, token, id, { vertical: 'Fintech', archetype: 'Scale-up', tags: ['b', 'a', 'b', ' c ', 'a'] });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ lead: { id, domain: 'label.com', vertical: 'Fintech', archetype: 'Scale-up', tags: ['b', 'a', 'c'] } });
    LeadLabelsResponse.parse(res.body);
    const { lead: l } = LeadResponse.parse((await get(env, token, `/leads/${id}`)).body);
    expect(l).toMatchObject({ vertical: 'Fintech', archetype: 'Scale-up', tags: ['b', 'a', 'c'] });
  });

  it('leaves absent fields alone and clears a field sent as null', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const id = await lead(env, accountId, 'clear.com');
    await patch(env, token, id, { vertical: 'Health', archetype: 'Startup', tags: ['x'] });
    const res = await patch(env, token, id, { vertical: null, tags: null });
    expect(res.body).toEqual({ lead: { id, domain: 'clear.com', vertical: null, archetype: 'Startup', tags: [] } });
  });

  it('accepts 120-character labels and 20 tags of 64 characters, and 400s one past each edge', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const id = await lead(env, accountId, 'edges.com');
    const twenty = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(64, 't'));
    const ok = await patch(env, token, id, { vertical: 'v'.repeat(120), archetype: 'a'.repeat(120), tags: twenty });
    expect(ok.status).toBe(200);
    expect(ok.body.lead.tags).toEqual(twenty);
    const dupes = await patch(env, token, id, { tags: [...twenty, twenty[0]] });
    expect(dupes.status).toBe(200);
    const cases: Array<[unknown, string]> = [
      [{ vertical: 'v'.repeat(121) }, 'vertical must be at most 120 characters'],
      [{ archetype: 'a'.repeat(121) }, 'archetype must be at most 120 characters'],
      [{ tags: [...twenty, 'one more'] }, 'tags must have at most 20 different tags'],
      [{ tags: ['t'.repeat(65)] }, 'tags.0 must be at most 64 characters'],
      [{ tags: ['ok', ''] }, 'tags.1 must not be empty'],
      [{ tags: 'solo' }, 'tags must be an array'],
      [{ vertical: 7 }, 'vertical must be a string'],
      [{ status: 'replied' }, 'body has unknown field status'],
    ];
    for (const [body, error] of cases) {
      const res = await patch(env, token, id, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });

  it("answers 404 for another account's lead and 403 for a read-only token, changing nothing", async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const reader = await env.tenant(['leads:read']);
    const id = await lead(env, a.accountId, 'guarded.com');
    const foreign = await patch(env, b.token, id, { vertical: 'x' });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 'not found' });
    const denied = await patch(env, reader.token, id, { vertical: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'forbidden', requiredScope: 'leads:write' });
    const { lead: l } = LeadResponse.parse((await get(env, a.token, `/leads/${id}`)).body);
    expect(l.vertical).toBeNull();
  });

  it('records the label change in the audit log', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const id = await lead(env, accountId, 'audit.com');
    await patch(env, token, id, { tags: ['x'] });
    const entries = await rows(env, 'audit_log', { account_id: accountId, target_id: id });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ method: 'PATCH', route: '/api/v1/leads/{id}', token_label: 'test', status: 200 });
  });
});
