import { newId } from '../../src/ids.js';
import { recordChannelEvents } from '../../src/results/channel-events.js';
import type { TestEnv } from './env.js';
import { buildCard, buildLead } from './factories.js';
import { backdate } from './row-setup.js';

/**
 * Rows as old as a retention test needs them: written at a time in the past, which no service writes (they
 * stamp the clock's now). Straight inserts, one named helper per kind, so the retention tests say what history
 * they seed rather than how; every other test makes its rows through the factories (test/helpers/factories.ts).
 */
type World = Pick<TestEnv, 'deps'>;

/** What `agedHistory` wrote, to look its rows up by. */
export interface AgedHistory {
  tag: string;
  turn: string;
  card: string;
}

/**
 * One row of every kind with a retention, all at time `at`, for the account: a channel event, a visit, a
 * conversion, an audit entry, a finished agent turn with a step and a reply, a dismissed card, a day's model calls.
 */
export async function agedHistory(env: World, accountId: string, at: number): Promise<AgedHistory> {
  const db = env.deps.db;
  const tag = newId('t').slice(2);
  await recordChannelEvents(db, [{ accountId, event: { channel: 'seo', type: 'visit', at, refId: `ref_${tag}` } }]);
  await agedVisits(env, [{ id: `vis_${tag}`, accountId, at }]);
  await db('conversions').insert({
    account_id: accountId,
    event_id: `ev_${tag}`,
    name: 'signup',
    value: 10,
    currency: 'USD',
    channel: 'seo',
    occurred_at: at,
    received_at: at,
    aggregated_at: at,
  });
  await agedAudit(env, accountId, [{ route: '/x', targetId: tag, at }]);
  const turn = `turn_${tag}`;
  await db('agent_turns').insert({
    id: turn,
    account_id: accountId,
    kind: 'message',
    origin: 'dashboard',
    status: 'replied',
    created_at: at,
    not_before: at,
    started_at: at,
    finished_at: at,
  });
  await db('agent_turn_steps').insert({ account_id: accountId, turn_id: turn, round: 0, idx: 0, result: JSON.stringify({ ok: true }) });
  await db('agent_replies').insert({ turn_id: turn, account_id: accountId, text: 'done', at });
  const card = await buildCard(db, accountId, 'plain');
  await db.raw(`UPDATE review_cards SET status = 'dismissed', resolved_at = ?, created_at = ? WHERE id = ?`, [at, at, card.id]);
  await db('agent_model_calls')
    .insert({ account_id: accountId, day: new Date(at).toISOString().slice(0, 10), calls: 3 })
    .onConflict(['account_id', 'day'])
    .ignore();
  return { tag, turn, card: card.id };
}

/**
 * What no retention may touch, written at time 0: a lead at `domain`, a contact of it, and an opt-out of one of
 * its addresses on the block list.
 */
export async function agedLeadWithOptOut(env: World, accountId: string, domain: string): Promise<{ leadId: string }> {
  const db = env.deps.db;
  const lead = await buildLead(db, accountId, { domain });
  await db.raw('UPDATE leads SET created_at = 0, updated_at = 0 WHERE id = ?', [lead.id]);
  await db('lead_contacts').insert({ id: newId('lc'), lead_id: lead.id, account_id: accountId, email: `a@${domain}`, created_at: 0 });
  await db('blocklist_entries').insert({
    id: newId('blk'),
    account_id: accountId,
    kind: 'email',
    value: `optout@${domain}`,
    source: 'opt_out',
    added_at: 0,
  });
  return { leadId: lead.id };
}

/** An audit entry to write at `at` (a GET answered 200 by a token unless said otherwise). */
export interface AgedAudit {
  route: string;
  at: number;
  method?: string;
  actor?: string;
  targetId?: string;
}

/** Audit entries of the account at their own times, in statements of at most 5,000 rows. */
export async function agedAudit(env: World, accountId: string, entries: AgedAudit[]): Promise<void> {
  const rows = entries.map((e) => ({
    account_id: accountId,
    actor: e.actor ?? 'token',
    method: e.method ?? 'GET',
    route: e.route,
    status: 200,
    at: e.at,
    ...(e.targetId === undefined ? {} : { target_id: e.targetId }),
  }));
  for (let i = 0; i < rows.length; i += 5_000) await env.deps.db('audit_log').insert(rows.slice(i, i + 5_000));
}

/** Visits by link from search at their own times (the month partition of each must exist). */
export async function agedVisits(env: World, visits: { id: string; accountId: string; at: number }[]): Promise<void> {
  await env.deps.db('visits').insert(visits.map((v) => ({ id: v.id, account_id: v.accountId, channel: 'seo', via: 'link', at: v.at })));
}

/** The times of a person's dashboard sessions changed behind the service, as only the clock or a hand edit does. */
export async function agedSessions(
  env: World,
  personId: string,
  times: { last_seen_at?: number; expires_at?: number; ended_at?: number },
): Promise<void> {
  await backdate(env, 'dashboard_sessions', { person_id: personId }, times);
}

/** Rows of `table` matching `where` past their end (`expires_at` a millisecond ago), as the clock would make them. */
export async function expiredRows(env: World, table: string, where: Record<string, unknown>): Promise<void> {
  await backdate(env, table, where, { expires_at: Date.now() - 1 });
}

/** A sequence's next step due at `at`, a time of the test's choosing rather than the sequence's schedule. */
export async function sequenceDueAt(env: World, sequenceId: string, at: number): Promise<void> {
  await backdate(env, 'mail_sequences', { id: sequenceId }, { next_at: at });
}
