/**
 * An experiment's counts per variant (the statement `/results` and the looks read): matured exposures and their
 * outcomes from `experiment_assignments`, then each kind's own counts over them (variants/registry.ts: an ad
 * experiment's from the ad platform's reports, a post's readers still to come).
 */
import { DEFAULT_REPLY_WINDOW_SECONDS } from '../config/experiments.js';
import type { Queryable } from '../db.js';
import { CONVERSIONS_SQL, VISITS_SQL } from '../measurement/measurement.repository.js';
import { CARD_STATES_SQL } from '../review/cards/doors.js';
import type { Metric, VariantCounts } from '../statistics/plan.js';
import type { Counted, ExperimentCounts } from './experiment.js';
import { judgedAfterMs, VARIANT_KINDS } from './variants/registry.js';

export type { Counted, ExperimentCounts } from './experiment.js';

interface CountRow {
  experiment_id: string;
  variant_index: number;
  exposures: number;
  sent: number;
  pending: number;
  lost: number;
  dismissed: number;
  assigned: number;
  /** Outcomes under each metric the statement counted (a column per metric of the experiments read). */
  reply_rate?: number;
  positive_reply_rate?: number;
  click_rate?: number;
  conversion_rate?: number;
}

/**
 * Whether an exposed contact has the metric's outcome (`a` is the assignment): a reply, a positive reply, a click on a
 * tracked link of its mail (a person's visit, never a bot's or a link scanner's), or a conversion attributed to such a visit.
 * A post's reader (post-title.ts): its recorded click (a person's, through the post's links), or a conversion of its visit.
 */
/**
 * Each outcome counts only within the experiment's window after its exposure (`m.until`: the plan's stated window, a
 * sequence wait's whole sequence on top), the same for every variant: a variant whose answers come faster or slower
 * after that is not credited for the difference (docs/decisions/experiments.md, "The reply window").
 */
const OUTCOME_SQL: Record<Metric, string> = {
  reply_rate: 'replied_at <= exposed_at + m.until',
  positive_reply_rate: 'positive_at <= exposed_at + m.until',
  click_rate: `clicked_at <= exposed_at + m.until
               OR EXISTS (SELECT 1 FROM ${VISITS_SQL} v WHERE v.account_id = a.account_id AND v.card_id = a.card_id AND NOT v.bot
                  AND v.at <= a.exposed_at + m.until)`,
  conversion_rate: `EXISTS (SELECT 1 FROM ${CONVERSIONS_SQL} c WHERE c.account_id = a.account_id AND c.visit_id = a.click_visit_id
                      AND c.occurred_at <= a.exposed_at + m.until)
                    OR EXISTS (SELECT 1 FROM ${CONVERSIONS_SQL} c JOIN ${VISITS_SQL} v ON v.account_id = c.account_id AND v.id = c.visit_id
                     WHERE c.account_id = a.account_id AND v.card_id = a.card_id AND NOT v.bot
                       AND c.occurred_at <= a.exposed_at + m.until)`,
};

/** A plan's window when it states none (plans made before it did): the default reply window. */
export const DEFAULT_OUTCOME_WINDOW_MS = DEFAULT_REPLY_WINDOW_SECONDS * 1000;

/** How long after its exposure an outcome of `e` counts: the plan's window, and a sequence wait's whole sequence. */
export const outcomeWindowMs = (e: Counted) => (e.plan.outcomeWindowMs ?? DEFAULT_OUTCOME_WINDOW_MS) + judgedAfterMs(e);

/** `counts` of several experiments of one account in one statement (`/results` reads up to 20), ads' in one more. */
export async function countExperiments(
  q: Queryable,
  accountId: string,
  list: readonly Counted[],
  maturedBy: number,
): Promise<Map<string, ExperimentCounts>> {
  const out = new Map<string, ExperimentCounts>();
  if (!list.length) return out;
  const metrics = [...new Set(list.map((e) => e.plan.metric))];
  const outcomes = metrics.map((m) => `count(*) FILTER (WHERE exposed_at <= m.cutoff AND (${OUTCOME_SQL[m]}))::int AS ${m}`).join(', ');
  // A mail card dismissed, or settled without going out (a refused address), will never expose its contact.
  const { rows } = (await q.raw(
    `SELECT experiment_id, variant_index,
            count(*) FILTER (WHERE exposed_at <= m.cutoff)::int AS exposures, ${outcomes},
            count(*) FILTER (WHERE exposed_at IS NOT NULL)::int AS sent, count(*)::int AS assigned,
            count(*) FILTER (WHERE exposed_at IS NULL AND (skipped IS NOT NULL OR EXISTS (
              SELECT 1 FROM ${CARD_STATES_SQL} c WHERE c.account_id = a.account_id AND c.id = a.card_id
                 AND c.status IN ('dismissed', 'resolved'))))::int AS lost,
            count(*) FILTER (WHERE exposed_at IS NULL AND skipped IS NULL AND EXISTS (
              SELECT 1 FROM ${CARD_STATES_SQL} c WHERE c.account_id = a.account_id AND c.id = a.card_id
                 AND c.status = 'dismissed'))::int AS dismissed,
            count(*) FILTER (WHERE skipped IS NULL AND (exposed_at > m.cutoff OR exposed_at IS NULL AND NOT EXISTS (
              SELECT 1 FROM ${CARD_STATES_SQL} c WHERE c.account_id = a.account_id AND c.id = a.card_id
                 AND c.status IN ('dismissed', 'resolved'))))::int AS pending
       FROM experiment_assignments a JOIN unnest(?::text[], ?::bigint[], ?::bigint[]) AS m(id, cutoff, until) ON m.id = a.experiment_id
      WHERE a.account_id = ? GROUP BY 1, 2`,
    [list.map((e) => e.id), list.map((e) => maturedBy - judgedAfterMs(e)), list.map(outcomeWindowMs), accountId],
  )) as { rows: CountRow[] };
  for (const e of list) {
    const mine = rows.filter((r) => r.experiment_id === e.id);
    const variants = e.plan.variants.map((_, i) => mine.find((x) => x.variant_index === i));
    out.set(e.id, {
      counts: variants.map((r) => ({ exposures: r?.exposures ?? 0, outcomes: r?.[e.plan.metric] ?? 0 })),
      sent: variants.map((r) => r?.sent ?? 0),
      pending: mine.reduce((s, r) => s + r.pending, 0),
      lost: variants.map((r) => r?.lost ?? 0),
      assigned: variants.map((r) => r?.assigned ?? 0),
      dismissed: mine.reduce((s, r) => s + r.dismissed, 0),
    });
  }
  for (const kind of Object.values(VARIANT_KINDS)) {
    const mine = list.filter((e) => e.thing === kind.thing);
    if (kind.counts && mine.length) await kind.counts(q, accountId, mine, maturedBy, out);
  }
  return out;
}

/**
 * The account's own history of `metric` in its mail experiments (every variant, every experiment): exposures sent
 * at or before `maturedBy` and those with the outcome within the default window. What a new plan's baseline is
 * measured on when there is enough of it (plan.ts HISTORY).
 */
export async function metricHistory(
  q: Queryable,
  accountId: string,
  metric: Metric,
  maturedBy: number,
  windowMs = DEFAULT_OUTCOME_WINDOW_MS,
): Promise<VariantCounts> {
  const { rows } = (await q.raw(
    `SELECT count(*)::int AS exposures, count(*) FILTER (WHERE ${OUTCOME_SQL[metric]})::int AS outcomes
       FROM experiment_assignments a CROSS JOIN (SELECT ?::bigint AS until) m
      WHERE a.account_id = ? AND a.exposed_at <= ?`,
    [windowMs, accountId, maturedBy],
  )) as { rows: VariantCounts[] };
  return rows[0] ?? { exposures: 0, outcomes: 0 };
}

/**
 * Where a mail experiment's wave stands, per variant (in plan order): `live`, contacts mailed or on their way (a card
 * drafted, not skipped, and not dismissed or settled without going out); `inFlight`, those of them not yet matured
 * (unsent, or sent after the cutoff), which the look waits for; `undrafted`, contacts left to draft. `unsent`: live
 * cards not sent yet (a person's approval, the send window); `lastSentAt`: the latest send, null with none.
 */
export interface Wave {
  live: number[];
  inFlight: number[];
  undrafted: number[];
  unsent: number;
  lastSentAt: number | null;
}

export async function waveOf(q: Queryable, e: Counted & { accountId: string }, maturedBy: number): Promise<Wave> {
  const { rows } = (await q.raw(
    `SELECT variant_index,
            count(*) FILTER (WHERE live)::int AS live,
            count(*) FILTER (WHERE live AND (exposed_at IS NULL OR exposed_at > ?))::int AS in_flight,
            count(*) FILTER (WHERE live AND exposed_at IS NULL)::int AS unsent,
            count(*) FILTER (WHERE card_id IS NULL AND skipped IS NULL)::int AS undrafted,
            max(exposed_at) AS last_sent
       FROM (SELECT a.*, a.card_id IS NOT NULL AND a.skipped IS NULL AND (a.exposed_at IS NOT NULL OR NOT EXISTS (
                      SELECT 1 FROM ${CARD_STATES_SQL} c WHERE c.account_id = a.account_id AND c.id = a.card_id
                         AND c.status IN ('dismissed', 'resolved'))) AS live
               FROM experiment_assignments a WHERE a.account_id = ? AND a.experiment_id = ?) w
      GROUP BY 1`,
    [maturedBy - judgedAfterMs(e), e.accountId, e.id],
  )) as { rows: { variant_index: number; live: number; in_flight: number; unsent: number; undrafted: number; last_sent: string | null }[] };
  const of = (i: number) => rows.find((r) => r.variant_index === i);
  const last = rows.map((r) => (r.last_sent === null ? null : Number(r.last_sent))).filter((t): t is number => t !== null);
  return {
    live: e.plan.variants.map((_, i) => of(i)?.live ?? 0),
    inFlight: e.plan.variants.map((_, i) => of(i)?.in_flight ?? 0),
    undrafted: e.plan.variants.map((_, i) => of(i)?.undrafted ?? 0),
    unsent: rows.reduce((n, r) => n + r.unsent, 0),
    lastSentAt: last.length ? Math.max(...last) : null,
  };
}
