/**
 * A card's stored fields as spec 2.2 names them, rendered to JSON text by Postgres: the queue page is
 * sent without parsing its payloads here and stringifying them again. The fields computed from other
 * columns (`actions`, `primaryLabel`, normalised `options`) are added by the review service
 * (`queueCardJson`); together they are exactly `cardView` (test/review/queue-json.test.ts). Rendered by
 * `row_to_json`, whose object has no space around its colons and commas (`{"id":"card_…","kind":…}`,
 * as every other answer); `json_build_object` writes `"id" : "card_…"`. The payload shown is the
 * capped copy (`payload_view`) where one was stored, else the whole draft. Stored JSON values inside
 * (payload, detail, …) keep Postgres's own text. Every reader of a card's JSON uses this one rendering,
 * with the table named `r`.
 */
export const QUEUE_CARD_JSON =
  `(SELECT row_to_json(c)::text FROM (SELECT r.id, r.kind, r.source_type AS "sourceType", r.status, r.title, r.prompt, ` +
  `r.summary, r.detail, r.priority, r.text_input AS "textInput", r.budget_change AS "budgetChange", ` +
  `COALESCE(r.payload_view, r.payload) AS payload, ` +
  `r.auto_resolve_at AS "autoResolveAt", r.due_at AS "dueAt", r.snoozed_until AS "snoozedUntil", r.lead_id AS "leadId", ` +
  `r.lead_contact_id AS "leadContactId", r.post_id AS "postId", r.created_at AS "createdAt", r.updated_at AS "updatedAt", ` +
  `r.resolved_at AS "resolvedAt", r.resolution) c)`;

/** A card as `QueueRow`: its JSON and the columns its computed fields are made from. */
export const QUEUE_ROW_SELECT =
  "r.kind, r.source_type, r.status, r.budget_change, r.options, r.snoozed_until, r.resolution->>'sequence' AS sequence_state, " +
  "(r.resolution->>'bounced') = 'true' AS bounced, " +
  `${QUEUE_CARD_JSON} AS json`;

export const toQueueRow = (r: QueueRowRaw): QueueRow => ({
  kind: r.kind,
  sourceType: r.source_type,
  status: r.status,
  budgetChange: r.budget_change,
  options: r.options,
  snoozedUntil: r.snoozed_until,
  resolution:
    r.sequence_state === null && !r.bounced
      ? null
      : { ...(r.sequence_state === null ? {} : { sequence: r.sequence_state }), ...(r.bounced ? { bounced: true } : {}) },
  json: r.json,
});

export interface QueueRowRaw {
  kind: string;
  source_type: string;
  status: string;
  budget_change: unknown;
  options: unknown;
  snoozed_until: number | null;
  sequence_state: string | null;
  /** The card's mail bounced (refused at RCPT, or a DSN after the relay took it): its label says so. */
  bounced: boolean | null;
  json: string;
}

/** One card of the queue page: its JSON as Postgres rendered it, and what its computed fields need. */
export interface QueueRow {
  kind: string;
  sourceType: string;
  status: string;
  budgetChange: unknown;
  options: unknown;
  snoozedUntil: number | null;
  /** What a card's verbs and label need of its resolution (`sequence`: running, finished, stopped; `bounced`). */
  resolution: { sequence?: string; bounced?: true } | null;
  /** A JSON object: every field of the card's view but `actions`, `primaryLabel` and `options`. */
  json: string;
}
