import type { Queryable } from '../db.js';
import type { ContactStatus } from './leads.types.js';
import type { Contact, LeadLabels, LeadSource } from './leads.types.js';

export interface LeadRow {
  id: string;
  account_id: string;
  seq: number;
  domain: string;
  company_name: string | null;
  status: string;
  reply_kind: string | null;
  decline_reason: string | null;
  score: number | null;
  score_reasons: string[];
  vertical: string | null;
  archetype: string | null;
  tags: string[];
  fields: Record<string, string>;
  draft_subject: string | null;
  draft_body: string | null;
  created_at: number;
  updated_at: number;
}

interface ContactRow {
  id: string;
  lead_id: string;
  seq: number;
  name: string | null;
  email: string | null;
  title: string | null;
  profile_url: string | null;
  status: ContactStatus;
  reply_kind: string | null;
}

export interface ResearchRow {
  lead_id: string;
  key: string;
  seq: number;
  reasoning: string;
  sources: LeadSource[];
}

const toContact = (r: ContactRow): Contact => ({
  id: r.id,
  name: r.name,
  email: r.email,
  title: r.title,
  profileUrl: r.profile_url,
  status: r.status,
  replyKind: r.reply_kind,
});

export function leadsRepository(q: Queryable) {
  return {
    /** Newest created first, strictly after `after` in that order; `limit` rows at most. */
    async page(
      accountId: string,
      opts: { status: string | null; after: { at: number; seq: number } | null; limit: number },
    ): Promise<LeadRow[]> {
      const query = q<LeadRow>('leads').where({ account_id: accountId });
      if (opts.status !== null) query.andWhere({ status: opts.status });
      if (opts.after) query.andWhereRaw('(created_at, seq) < (?, ?)', [opts.after.at, opts.after.seq]);
      return query
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'seq', order: 'desc' },
        ])
        .limit(opts.limit);
    },

    async byId(accountId: string, id: string): Promise<LeadRow | undefined> {
      return q<LeadRow>('leads').where({ account_id: accountId, id }).first();
    },

    async byDomain(accountId: string, domain: string, lock: boolean): Promise<LeadRow | undefined> {
      const query = q<LeadRow>('leads').where({ account_id: accountId, domain }).first();
      return lock ? query.forUpdate() : query;
    },

    /** Inserts unless the domain is already a lead of the account; true when this call created it. */
    async insertIfAbsent(row: Omit<LeadRow, 'seq'>): Promise<boolean> {
      const inserted = await q('leads')
        .insert({ ...row, score_reasons: JSON.stringify(row.score_reasons), fields: JSON.stringify(row.fields) })
        .onConflict(['account_id', 'domain'])
        .ignore()
        .returning('id');
      return inserted.length > 0;
    },

    async update(id: string, patch: Partial<Omit<LeadRow, 'id' | 'account_id' | 'seq'>>): Promise<void> {
      const row: Record<string, unknown> = { ...patch };
      if (patch.score_reasons) row.score_reasons = JSON.stringify(patch.score_reasons);
      if (patch.fields) row.fields = JSON.stringify(patch.fields);
      await q('leads').where({ id }).update(row);
    },

    /** Sets the labels; undefined keys are left alone. Nothing when the lead is not the account's. */
    async setLabels(
      accountId: string,
      id: string,
      labels: Partial<Pick<LeadLabels, 'vertical' | 'archetype' | 'tags'>>,
      at: number,
    ): Promise<LeadLabels | undefined> {
      const rows = await q('leads')
        .where({ account_id: accountId, id })
        .update({ ...labels, updated_at: at })
        .returning(['id', 'domain', 'vertical', 'archetype', 'tags']);
      return rows[0] as LeadLabels | undefined;
    },

    /**
     * The list form's `contact` of each lead: the contact whose status the lead's follows (the latest to
     * reach it, so a `replied` lead shows who replied), else the first contact.
     */
    async firstContacts(leadIds: string[]): Promise<Map<string, Contact>> {
      if (!leadIds.length) return new Map();
      const rows: ContactRow[] = await q('lead_contacts as c')
        .join('leads as l', 'l.id', 'c.lead_id')
        .distinctOn('c.lead_id')
        .select('c.*')
        .whereIn('c.lead_id', leadIds)
        .orderByRaw('c.lead_id, (c.status = l.status) DESC, c.status_at DESC NULLS LAST, c.seq');
      return new Map(rows.map((r) => [r.lead_id, toContact(r)]));
    },

    async contacts(leadId: string, limit: number): Promise<Contact[]> {
      const rows = await q<ContactRow>('lead_contacts').where({ lead_id: leadId }).orderBy('seq').limit(limit);
      return rows.map(toContact);
    },

    async contactRows(leadId: string): Promise<ContactRow[]> {
      return q<ContactRow>('lead_contacts').where({ lead_id: leadId }).orderBy('seq');
    },

    async insertContact(row: {
      id: string;
      lead_id: string;
      account_id: string;
      name: string | null;
      email: string | null;
      title: string | null;
      profile_url: string | null;
      created_at: number;
    }): Promise<void> {
      await q('lead_contacts').insert(row);
    },

    async updateContact(id: string, patch: Partial<Pick<ContactRow, 'name' | 'email' | 'title' | 'profile_url'>>): Promise<void> {
      if (Object.keys(patch).length) await q('lead_contacts').where({ id }).update(patch);
    },

    /** Research entries merge by key: a key given again replaces its reasoning and sources. */
    async upsertResearch(
      accountId: string,
      leadId: string,
      entry: { key: string; reasoning: string; sources: LeadSource[] },
      at: number,
    ): Promise<void> {
      const { key, reasoning } = entry;
      await q('lead_research')
        .insert({ account_id: accountId, lead_id: leadId, key, reasoning, sources: JSON.stringify(entry.sources), updated_at: at })
        .onConflict(['account_id', 'lead_id', 'key'])
        .merge(['reasoning', 'sources', 'updated_at']);
    },

    async research(leadIds: string[], keys?: string[]): Promise<ResearchRow[]> {
      if (!leadIds.length) return [];
      const query = q<ResearchRow>('lead_research').select('lead_id', 'key', 'seq', 'reasoning', 'sources').whereIn('lead_id', leadIds);
      if (keys) query.whereIn('key', keys);
      return query.orderBy('seq');
    },

    /** Of `emails` (lower-cased), those already an address of one of the account's contacts (one index lookup each). */
    async contactEmailsAmong(accountId: string, emails: string[]): Promise<Set<string>> {
      if (!emails.length) return new Set();
      const rows = (await q('lead_contacts')
        .where({ account_id: accountId })
        .whereNotNull('email')
        .whereRaw('lower(email) = ANY(?)', [emails])
        .distinct(q.raw('lower(email) AS email'))) as { email: string }[];
      return new Set(rows.map((r) => r.email));
    },

    /** The account's leads among `domains`, by domain. */
    async idsByDomain(accountId: string, domains: string[]): Promise<Map<string, string>> {
      if (!domains.length) return new Map();
      const rows: { id: string; domain: string }[] = await q('leads')
        .where({ account_id: accountId })
        .whereIn('domain', domains)
        .select('id', 'domain');
      return new Map(rows.map((r) => [r.domain, r.id]));
    },

    /** Inserts many leads in one statement, leaving a domain already a lead of the account as it is. */
    async insertManyIfAbsent(rows: Array<Omit<LeadRow, 'seq'> & { source: string }>): Promise<void> {
      if (!rows.length) return;
      await q('leads')
        .insert(rows.map((row) => ({ ...row, score_reasons: JSON.stringify(row.score_reasons), fields: JSON.stringify(row.fields) })))
        .onConflict(['account_id', 'domain'])
        .ignore();
    },

    /** Inserts many contacts in one statement. */
    async insertContacts(
      rows: Array<{
        id: string;
        lead_id: string;
        account_id: string;
        name: string | null;
        email: string | null;
        title: null;
        profile_url: null;
        created_at: number;
      }>,
    ): Promise<void> {
      if (rows.length) await q('lead_contacts').insert(rows);
    },

    async columns(accountId: string): Promise<string[]> {
      const row = await q('lead_columns').where({ account_id: accountId }).first<{ keys: string[] } | undefined>('keys');
      return row?.keys ?? [];
    },

    async setColumns(accountId: string, keys: string[], at: number): Promise<void> {
      await q('lead_columns').insert({ account_id: accountId, keys, updated_at: at }).onConflict('account_id').merge();
    },
  };
}
