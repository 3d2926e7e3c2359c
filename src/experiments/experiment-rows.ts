/**
 * The rows of experiments (tables `experiments`, `experiment_assignments`, `experiment_defaults`; migration
 * 20261130130000): read and written here, by every part of this area. The counts that read them with other areas'
 * tables are experiment-counts.ts'; experiments.repository.ts is both together.
 */
import type { Queryable } from '../db.js';
import { assignVariant, normaliseContact } from '../statistics/assignment.js';
import type { Decision } from '../statistics/stopping.js';
import type { AudienceMember, Experiment, ExperimentStatus, Thing } from './experiment.js';

export interface Row {
  account_id: string;
  id: string;
  card_id: string | null;
  status: ExperimentStatus;
  thing: Thing;
  topic: string;
  plan: Experiment['plan'];
  draft: Experiment['draft'];
  audience: AudienceMember[];
  looks: number[];
  decision: Decision | null;
  winner_key: string | null;
  result_card_id: string | null;
  created_at: string;
  started_at: string | null;
  decided_at: string | null;
  adopted_at: string | null;
  spared: number | null;
}

const num = (v: string | null) => (v === null ? null : Number(v));

export const toExperiment = (r: Row): Experiment => ({
  accountId: r.account_id,
  id: r.id,
  cardId: r.card_id,
  status: r.status,
  thing: r.thing,
  topic: r.topic,
  plan: r.plan,
  draft: r.draft,
  audience: r.audience,
  looks: r.looks,
  decision: r.decision,
  winnerKey: r.winner_key,
  resultCardId: r.result_card_id,
  createdAt: Number(r.created_at),
  startedAt: num(r.started_at),
  decidedAt: num(r.decided_at),
  adoptedAt: num(r.adopted_at),
  spared: r.spared,
});

/** One assignment waiting for its mail card. */
export interface Undrafted {
  contact: string;
  leadId: string | null;
  variantIndex: number;
  variantKey: string;
}

/** The topic as a default is keyed: "Onboarding " and "onboarding" are one topic. */
export const topicKey = (topic: string) => normaliseContact(topic).replace(/\s+/g, ' ');

export function experimentRows(q: Queryable) {
  return {
    async insert(e: Pick<Experiment, 'accountId' | 'id' | 'cardId' | 'thing' | 'topic' | 'plan' | 'draft' | 'audience' | 'createdAt'>) {
      await q('experiments').insert({
        account_id: e.accountId,
        id: e.id,
        card_id: e.cardId,
        thing: e.thing,
        topic: e.topic,
        plan: JSON.stringify(e.plan),
        draft: JSON.stringify(e.draft),
        audience: JSON.stringify(e.audience),
        created_at: e.createdAt,
      });
    },

    async get(accountId: string, id: string): Promise<Experiment | null> {
      const row = (await q('experiments').where({ account_id: accountId, id }).first()) as Row | undefined;
      return row ? toExperiment(row) : null;
    },

    /** The account's experiments, newest first: those running, and those that ended at or after `since`. */
    async listFor(accountId: string, since: number, limit = 20): Promise<Experiment[]> {
      const rows = (await q('experiments')
        .where({ account_id: accountId })
        .where((w) => w.whereIn('status', ['running', 'paused', 'proposed']).orWhere('decided_at', '>=', since))
        .orderBy('created_at', 'desc')
        .limit(limit)) as Row[];
      return rows.map(toExperiment);
    },

    /**
     * Starts a proposed experiment: every audience member's variant recorded (assignVariant) before any mail is
     * drafted. Idempotent: a second call finds it running and the assignments there (ON CONFLICT DO NOTHING).
     */
    async start(accountId: string, id: string, at: number): Promise<boolean> {
      const e = await this.get(accountId, id);
      if (!e || (e.status !== 'proposed' && e.status !== 'running')) return false;
      const variants = e.plan.variants;
      const seen = new Set<string>();
      const rows = [];
      for (const m of e.audience) {
        const contact = normaliseContact(m.email);
        if (seen.has(contact)) continue;
        seen.add(contact);
        const index = assignVariant(id, contact, variants.length);
        rows.push({
          account_id: accountId,
          experiment_id: id,
          contact,
          lead_id: m.leadId,
          variant_index: index,
          variant_key: variants[index]!.key,
          assigned_at: at,
        });
      }
      for (let i = 0; i < rows.length; i += 1_000) {
        await q('experiment_assignments')
          .insert(rows.slice(i, i + 1_000))
          .onConflict(['account_id', 'experiment_id', 'contact'])
          .ignore();
      }
      await q('experiments').where({ account_id: accountId, id, status: 'proposed' }).update({ status: 'running', started_at: at });
      return true;
    },

    async setStatus(accountId: string, id: string, from: ExperimentStatus[], to: ExperimentStatus, at: number): Promise<boolean> {
      const changes: Record<string, unknown> = { status: to };
      // A dismissed proposal ended too: decided_at puts it in the /results window it was dismissed in.
      if (to === 'decided' || to === 'no_winner' || to === 'dismissed') changes.decided_at = at;
      return (await q('experiments').where({ account_id: accountId, id }).whereIn('status', from).update(changes)) > 0;
    },

    /** Records a look (its fraction) and its decision; `ends` ends a running one, with the contacts it spared (pacing.ts). */
    async recordLook(e: Experiment, decision: Decision, at: number, ends: 'decided' | 'no_winner' | null, spared: number | null = null) {
      const looks = decision.look ? [...e.looks, decision.look.fraction] : e.looks;
      const changes: Record<string, unknown> = { looks: JSON.stringify(looks), decision: JSON.stringify(decision) };
      if (ends) Object.assign(changes, { status: ends, decided_at: at, spared });
      if (decision.state === 'winner') changes.winner_key = decision.winner.key;
      return (await q('experiments').where({ account_id: e.accountId, id: e.id, status: 'running' }).update(changes)) > 0;
    },

    /**
     * Records on a running experiment's row the one card it files at start (an ad test's `adTestCardId`, a post's
     * `blogCardId`): true once, in the transaction that files it, so two passes never file two.
     */
    async claimCard(accountId: string, id: string, field: 'adTestCardId' | 'blogCardId', cardId: string): Promise<boolean> {
      const n = await q('experiments')
        .where({ account_id: accountId, id, status: 'running' })
        .whereRaw('draft->>? IS NULL', [field])
        .update({ draft: q.raw('draft || jsonb_build_object(?::text, ?::text)', [field, cardId]) });
      return n > 0;
    },

    /** A running experiment's plan replaced (replanned before its first look); false when it is no longer running. */
    async setPlan(accountId: string, id: string, plan: Experiment['plan']): Promise<boolean> {
      const n = await q('experiments')
        .where({ account_id: accountId, id, status: 'running' })
        .update({ plan: JSON.stringify(plan) });
      return n > 0;
    },

    async setResultCard(accountId: string, id: string, cardId: string): Promise<void> {
      await q('experiments').where({ account_id: accountId, id }).update({ result_card_id: cardId });
    },

    /** Up to `limit` assignments of a running experiment still without a mail card (of these variants only, when given). */
    async undrafted(accountId: string, id: string, limit: number, variants?: number[]): Promise<Undrafted[]> {
      const rows = (await q('experiment_assignments')
        .where({ account_id: accountId, experiment_id: id })
        .modify((w) => (variants ? w.whereIn('variant_index', variants) : w))
        .whereNull('card_id')
        .whereNull('skipped')
        .orderBy('contact')
        .limit(limit)
        .select('contact', 'lead_id', 'variant_index', 'variant_key')) as {
        contact: string;
        lead_id: string | null;
        variant_index: number;
        variant_key: string;
      }[];
      return rows.map((r) => ({ contact: r.contact, leadId: r.lead_id, variantIndex: r.variant_index, variantKey: r.variant_key }));
    },

    /** Names the mail card drafted for an assignment; false when another drafter got there first. */
    async drafted(accountId: string, id: string, contact: string, cardId: string): Promise<boolean> {
      const n = await q('experiment_assignments')
        .where({ account_id: accountId, experiment_id: id, contact })
        .whereNull('card_id')
        .update({ card_id: cardId });
      return n > 0;
    },

    async skip(accountId: string, id: string, contact: string, why: string): Promise<void> {
      await q('experiment_assignments')
        .where({ account_id: accountId, experiment_id: id, contact })
        .whereNull('card_id')
        .update({ skipped: why.slice(0, 200) });
    },

    /** The mail of `cardId` went out: its contact is exposed (once; the first send counts). */
    async exposed(accountId: string, cardId: string, at: number): Promise<void> {
      await q('experiment_assignments')
        .where({ account_id: accountId, card_id: cardId })
        .whereNull('exposed_at')
        .update({ exposed_at: at });
    },

    /** Replies to mail cards: each card's contact replied (and positively, when so); the first reply counts. */
    async replied(items: { accountId: string; cardId: string; positive: boolean; at: number }[]): Promise<void> {
      if (!items.length) return;
      // One statement for the batch; mail of no experiment matches no row.
      await q.raw(
        `UPDATE experiment_assignments a SET replied_at = coalesce(a.replied_at, r.at),
                positive_at = coalesce(a.positive_at, CASE WHEN r.positive THEN r.at END)
           FROM unnest(?::text[], ?::text[], ?::boolean[], ?::bigint[]) AS r(account_id, card_id, positive, at)
          WHERE a.account_id = r.account_id AND a.card_id = r.card_id`,
        [items.map((i) => i.accountId), items.map((i) => i.cardId), items.map((i) => i.positive), items.map((i) => i.at)],
      );
    },

    /** Each contact's assignment (tests and the admin's checks): contact → variant key and card. */
    async assignments(accountId: string, id: string) {
      return (await q('experiment_assignments')
        .where({ account_id: accountId, experiment_id: id })
        .select('contact', 'variant_key', 'card_id', 'exposed_at', 'replied_at', 'skipped')) as {
        contact: string;
        variant_key: string;
        card_id: string | null;
        exposed_at: string | null;
        replied_at: string | null;
        skipped: string | null;
      }[];
    },

    /** Records that a decided experiment's winner is being adopted: true once (same transaction as the adoption). */
    async claimAdoption(accountId: string, experimentId: string, at: number): Promise<boolean> {
      return (
        (await q('experiments').where({ account_id: accountId, id: experimentId }).whereNull('adopted_at').update({ adopted_at: at })) > 0
      );
    },

    async adopt(accountId: string, thing: Thing, topic: string, value: string, experimentId: string, at: number): Promise<void> {
      await q('experiment_defaults')
        .insert({ account_id: accountId, thing, topic_key: topicKey(topic), value, experiment_id: experimentId, adopted_at: at })
        .onConflict(['account_id', 'thing', 'topic_key'])
        .merge();
      await q('experiments').where({ account_id: accountId, id: experimentId }).update({ adopted_at: at });
    },

    /** The adopted default for this thing and topic, if an experiment decided one. */
    async defaultFor(accountId: string, thing: Thing, topic: string): Promise<string | null> {
      const row = (await q('experiment_defaults')
        .where({ account_id: accountId, thing, topic_key: topicKey(topic) })
        .first('value')) as { value: string } | undefined;
      return row?.value ?? null;
    },
  };
}
