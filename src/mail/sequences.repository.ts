import type { Queryable } from '../db.js';
import type { SequenceStep } from './sequence-steps.js';

/** A sequence's id, from its card's (one sequence per card): mail_threads name it from the first mail on. */
export const sequenceIdFor = (cardId: string) => `seq_${cardId.replace(/^card_/, '')}`;

export type SequenceStatus = 'active' | 'stopped' | 'finished';

/** A sequence card's steps and how far it got (table `mail_sequences`), made when its first mail went out. */
export interface Sequence {
  id: string;
  accountId: string;
  cardId: string;
  leadId: string | null;
  to: string;
  steps: SequenceStep[];
  /** The next step to ship (steps.length once every step shipped). */
  nextStep: number;
  nextAt: number | null;
  status: SequenceStatus;
  stopReason: string | null;
  createdAt: number;
  updatedAt: number;
}

interface Row {
  id: string;
  account_id: string;
  card_id: string;
  lead_id: string | null;
  to_address: string;
  steps: SequenceStep[];
  next_step: number;
  next_at: string | number | null;
  status: SequenceStatus;
  stop_reason: string | null;
  created_at: string | number;
  updated_at: string | number;
}

const toSequence = (r: Row): Sequence => ({
  id: r.id,
  accountId: r.account_id,
  cardId: r.card_id,
  leadId: r.lead_id,
  to: r.to_address,
  steps: r.steps,
  nextStep: r.next_step,
  nextAt: r.next_at === null ? null : Number(r.next_at),
  status: r.status,
  stopReason: r.stop_reason,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
});

/** Which active sequences to stop, and why: one sequence, or every one to an address or of a lead. */
export interface SequenceMatch {
  accountId: string;
  id?: string;
  to?: string;
  leadId?: string | null;
  reason: string;
}

export function sequencesRepository(q: Queryable) {
  return {
    /** Made once per card (a repeated start changes nothing); returns the row as it stands. */
    async start(
      s: { id: string; accountId: string; cardId: string; leadId: string | null; to: string; steps: SequenceStep[] },
      at: number,
    ) {
      const more = s.steps.length > 1;
      await q('mail_sequences')
        .insert({
          id: s.id,
          account_id: s.accountId,
          card_id: s.cardId,
          lead_id: s.leadId,
          to_address: s.to.toLowerCase(),
          steps: JSON.stringify(s.steps),
          next_step: 1,
          next_at: more ? at + s.steps[1]!.delayMs : null,
          status: more ? 'active' : 'finished',
          created_at: at,
          updated_at: at,
        })
        .onConflict(['account_id', 'card_id'])
        .ignore();
      return (await this.byCard(s.accountId, s.cardId))!;
    },
    async find(accountId: string, id: string, lock = false): Promise<Sequence | null> {
      let query = q('mail_sequences').where({ account_id: accountId, id }).first<Row | undefined>();
      if (lock) query = query.forUpdate();
      const row = await query;
      return row ? toSequence(row) : null;
    },
    async byCard(accountId: string, cardId: string): Promise<Sequence | null> {
      const row: Row | undefined = await q('mail_sequences').where({ account_id: accountId, card_id: cardId }).first();
      return row ? toSequence(row) : null;
    },
    /** Step `step` shipped: the next one is due after its delay, or the sequence is finished. False if it had moved on. */
    async advance(s: Sequence, step: number, at: number): Promise<Sequence | null> {
      const next = step + 1;
      const done = next >= s.steps.length;
      const [row] = await q('mail_sequences')
        .where({ id: s.id, next_step: step })
        .update({
          next_step: next,
          next_at: done ? null : at + s.steps[next]!.delayMs,
          status: q.raw(`CASE WHEN status = 'active' AND ? THEN 'finished' ELSE status END`, [done]),
          updated_at: at,
        })
        .returning('*');
      return row ? toSequence(row as Row) : null;
    },
    /**
     * Stops the active sequences each match names (its sequence, the recipient's address, or the lead)
     * in one statement: their later steps ship nothing. Returns the stopped ones: card, and which match.
     */
    async stop(matches: SequenceMatch[], at: number): Promise<{ cardId: string; match: number }[]> {
      if (!matches.length) return [];
      for (const m of matches) if (!m.id && !m.to && !m.leadId) throw new Error('stop needs a sequence, an address or a lead');
      const { rows } = await q.raw<{ rows: { card_id: string; match: number }[] }>(
        `UPDATE mail_sequences AS s SET status = 'stopped', stop_reason = v.reason, next_at = NULL, updated_at = ?::bigint
         FROM (VALUES ${matches.map(() => '(?::int, ?::text, ?::text, ?::text, ?::text, ?::text)').join(', ')})
           AS v(n, account_id, id, to_address, lead_id, reason)
         WHERE s.status = 'active' AND s.account_id = v.account_id
           AND (s.id = v.id OR s.to_address = v.to_address OR s.lead_id = v.lead_id)
         RETURNING s.card_id, v.n AS match`,
        [at, ...matches.flatMap((m, n) => [n, m.accountId, m.id ?? null, m.to?.toLowerCase() ?? null, m.leadId ?? null, m.reason])],
      );
      return rows.map((r) => ({ cardId: r.card_id, match: Number(r.match) }));
    },
    /** Active sequences whose next step was due before `before` (the sweep checks each has its job). */
    async overdue(before: number, limit: number): Promise<Sequence[]> {
      const rows: Row[] = await q('mail_sequences')
        .where({ status: 'active' })
        .andWhere('next_at', '<', before)
        .orderBy('next_at')
        .limit(limit);
      return rows.map(toSequence);
    },
  };
}
