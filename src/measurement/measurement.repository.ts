import { recordVisitEventsSql } from '../results/event-statements.js';
import { preparedQuery, type Queryable } from '../db.js';

/** A tracked link as a visit through it needs it. Links never change once written. */
export interface TrackedLink {
  code: string;
  accountId: string;
  url: string;
  channel: string;
  sourceType: string;
  sourceId: string;
  cardId: string | null;
  leadId: string | null;
}

export interface VisitRow {
  id: string;
  account_id: string;
  channel: string;
  via: 'link' | 'reported';
  link_code: string | null;
  source_type: string | null;
  source_id: string | null;
  card_id: string | null;
  lead_id: string | null;
  url: string | null;
  referrer: string | null;
  utm: Record<string, string> | null;
  ua_hash: string | null;
  bot: boolean;
  at: number;
}

/** Where a visit came from: what a later visit or a conversion that names it inherits. */
export type VisitOrigin = Pick<VisitRow, 'id' | 'channel' | 'link_code' | 'source_type' | 'source_id' | 'card_id' | 'lead_id'>;

export interface ConversionRow {
  account_id: string;
  event_id: string;
  name: string;
  visit_id: string | null;
  value: number | null;
  currency: string | null;
  properties: Record<string, unknown> | null;
  occurred_at: number;
  received_at: number;
}

/** An unaggregated conversion with its visit's channel (null without a visit). */
export interface Unaggregated {
  event_id: string;
  occurred_at: number;
  value: string | null;
  visit_channel: string | null;
}

/**
 * Visits through tracked links, their channel events (`visit`, or `scanner_click` for a bot; only on
 * the channels in $2; each only when its ref, the visit id, was new: results' recordVisitEventsSql) and those channels'
 * connections, in one statement: atomic without a transaction, prepared once per connection (this is every click's write).
 */
const INSERT_LINK_VISITS = {
  name: 'measurement_insert_link_visits',
  text: `WITH v AS (
           SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(id text, account_id text, channel text, link_code text,
             source_type text, source_id text, card_id text, lead_id text, url text, ua_hash text, bot boolean, at bigint)
         ), visit AS (
           INSERT INTO visits (id, account_id, channel, via, link_code, source_type, source_id, card_id, lead_id, url, ua_hash, bot, at)
           SELECT id, account_id, channel, 'link', link_code, source_type, source_id, card_id, lead_id, url, ua_hash, bot, at FROM v
         ), ${recordVisitEventsSql('v', '$2::text[]', '$3::bigint')}`,
};

const LINK_COLUMNS = ['code', 'account_id', 'url', 'channel', 'source_type', 'source_id', 'card_id', 'lead_id'];

const toLink = (r: Record<string, string | null>): TrackedLink => ({
  code: r.code!,
  accountId: r.account_id!,
  url: r.url!,
  channel: r.channel!,
  sourceType: r.source_type!,
  sourceId: r.source_id!,
  cardId: r.card_id ?? null,
  leadId: r.lead_id ?? null,
});

/**
 * SQL text for statements of another area that must read visits and conversions inside them (an experiment's counts):
 * visits as a table of (account_id, id, card_id, bot, at), conversions of (account_id, visit_id, occurred_at), subqueries Postgres folds
 * into the statement. Read-only.
 */
export const VISITS_SQL = '(SELECT account_id, id, card_id, bot, at FROM visits)';
export const CONVERSIONS_SQL = '(SELECT account_id, visit_id, occurred_at FROM conversions)';

export function measurementRepository(q: Queryable) {
  return {
    /** Any account's link by its code (the public `/l/{code}` route: the code is the credential). */
    async linkByCode(code: string): Promise<TrackedLink | null> {
      const row = (await q('tracked_links').where({ code }).first(LINK_COLUMNS)) as Record<string, string | null> | undefined;
      return row ? toLink(row) : null;
    },

    async linkOfAccount(accountId: string, code: string): Promise<TrackedLink | null> {
      const row = (await q('tracked_links').where({ code, account_id: accountId }).first(LINK_COLUMNS)) as
        | Record<string, string | null>
        | undefined;
      return row ? toLink(row) : null;
    },

    async visitOfAccount(accountId: string, id: string): Promise<VisitOrigin | null> {
      const row = (await q('visits')
        .where({ id, account_id: accountId })
        .first('id', 'channel', 'link_code', 'source_type', 'source_id', 'card_id', 'lead_id')) as VisitOrigin | undefined;
      return row ?? null;
    },

    /** Which of these ids are visits of the account. */
    async visitIdsOfAccount(accountId: string, ids: string[]): Promise<Set<string>> {
      if (!ids.length) return new Set();
      const rows = (await q('visits').where({ account_id: accountId }).whereIn('id', ids).pluck('id')) as string[];
      return new Set(rows);
    },

    async insertVisits(rows: VisitRow[]): Promise<void> {
      if (!rows.length) return;
      await q('visits').insert(rows.map((r) => ({ ...r, utm: r.utm === null ? null : JSON.stringify(r.utm) })));
    },

    /** Visits through tracked links with their channel events (on `eventChannels`), in one statement. */
    async insertLinkVisits(rows: VisitRow[], eventChannels: readonly string[], at: number): Promise<void> {
      if (!rows.length) return;
      const json = rows.map(({ via: _via, referrer: _r, utm: _u, ...r }) => r);
      await preparedQuery(q, { ...INSERT_LINK_VISITS, values: [JSON.stringify(json), eventChannels, at] });
    },

    /** Deletes up to `limit` of the oldest bot visits older than `before` (their `scanner_click` events stay); answers how many. */
    async pruneBotVisits(before: number, limit: number): Promise<number> {
      const { rowCount } = (await q.raw(
        'DELETE FROM visits WHERE (account_id, id, at) IN (SELECT account_id, id, at FROM visits WHERE bot AND at < ? ORDER BY at LIMIT ?)',
        [before, limit],
      )) as { rowCount: number };
      return rowCount;
    },

    /** Inserts the conversions not stored before (per account and event id); answers the event ids it inserted. */
    async insertConversions(rows: ConversionRow[]): Promise<Set<string>> {
      if (!rows.length) return new Set();
      const inserted = (await q('conversions')
        .insert(rows.map((r) => ({ ...r, properties: r.properties === null ? null : JSON.stringify(r.properties) })))
        .onConflict(['account_id', 'event_id'])
        .ignore()
        .returning('event_id')) as { event_id: string }[];
      return new Set(inserted.map((r) => r.event_id));
    },

    /**
     * Up to `limit` of the account's unaggregated conversions, locked for this transaction; rows another
     * run holds are skipped (that run counts them), so two runs of one account never count one twice.
     */
    async lockUnaggregated(accountId: string, limit: number): Promise<Unaggregated[]> {
      const { rows } = (await q.raw(
        `SELECT c.event_id, c.occurred_at::float8 AS occurred_at, c.value::text AS value, v.channel AS visit_channel
           FROM conversions c
           LEFT JOIN visits v ON v.id = c.visit_id AND v.account_id = c.account_id
          WHERE c.account_id = ? AND c.aggregated_at IS NULL
          ORDER BY c.received_at, c.event_id
          LIMIT ?
          FOR UPDATE OF c SKIP LOCKED`,
        [accountId, limit],
      )) as { rows: Unaggregated[] };
      return rows;
    },

    async markAggregated(accountId: string, items: { eventId: string; channel: string }[], at: number): Promise<void> {
      if (!items.length) return;
      await q.raw(
        `UPDATE conversions c SET channel = x.channel, aggregated_at = ?
           FROM jsonb_to_recordset(?::jsonb) AS x(event_id text, channel text)
          WHERE c.account_id = ? AND c.event_id = x.event_id AND c.aggregated_at IS NULL`,
        [at, JSON.stringify(items.map((i) => ({ event_id: i.eventId, channel: i.channel }))), accountId],
      );
    },

    async hasUnaggregated(accountId: string): Promise<boolean> {
      return Boolean(await q('conversions').where({ account_id: accountId }).whereNull('aggregated_at').first('event_id'));
    },

    /** Accounts with a conversion received before `before` and still not aggregated (its job was lost or failed). */
    async accountsUnaggregated(before: number, limit: number): Promise<string[]> {
      return q('conversions')
        .distinct('account_id')
        .whereNull('aggregated_at')
        .andWhere('received_at', '<', before)
        .limit(limit)
        .pluck('account_id') as Promise<string[]>;
    },
  };
}
