import { KINDS_OF_WORK, type KindOfWork } from '../../channels/kinds.js';

export { mailDraftOf } from '../../mail/mail-draft.js';

/**
 * Card statuses. In the queue: `pending`, `needs_revision`. `snoozed` is hidden until `snoozedUntil`;
 * `sending` holds a mail card whose send is fenced (in flight or awaiting reconciliation); `resolved`,
 * `sent` and `dismissed` are final.
 */
export const QUEUE_STATUSES = ['pending', 'needs_revision'] as const;
/** Statuses in which a person's verbs (other than dismiss during a revision) apply. */
export const OPEN_STATUSES = ['pending', 'snoozed'] as const;

/** Mail cards ship through `POST /review/{id}/send`, never through `answer`. */
export const MAIL_SOURCES = ['mail_draft', 'mail_reply'] as const;
/** Cards that set up outbound work; dismissing one also cancels its proposal. */
export const OUTBOUND_SETUP_SOURCES = ['outbound_setup', 'workflow_proposal'] as const;
/**
 * A shipment whose outcome its service could not confirm: a person says whether it went (options `mark_sent`,
 * `mark_not_sent`; the words for each kind of work are in delivery-question.ts).
 */
export const DELIVERY_QUESTION_SOURCE = 'mail_delivery_unknown';

export interface Option {
  value: string;
  label: string;
}

interface ShapeInput {
  kind: string;
  sourceType: string;
  status: string;
  budgetChange?: unknown;
  /** Read for a sent sequence card (`resolution.sequence`: its follow-ups still running?) and a bounced send (`bounced`). */
  resolution?: unknown;
}

/** A sequence card whose first mail went out and whose follow-ups are still to come: dismissing it stops them. */
export const isRunningSequence = (c: ShapeInput) =>
  c.sourceType === 'sequence' && c.status === 'sent' && (c.resolution as { sequence?: unknown } | null)?.sequence === 'running';

export const isMailCard = (c: { sourceType: string }) => (MAIL_SOURCES as readonly string[]).includes(c.sourceType);
export const isBudgetCard = (c: { sourceType: string; budgetChange?: unknown }) =>
  c.sourceType === 'budget_change' || (c.budgetChange !== null && c.budgetChange !== undefined);
export const isOutboundSetup = (c: { sourceType: string }) => (OUTBOUND_SETUP_SOURCES as readonly string[]).includes(c.sourceType);

/** The verbs a card accepts now, from its kind, sourceType and status alone. */
export function actionsFor(c: ShapeInput): string[] {
  if (c.status === 'needs_revision' || isRunningSequence(c)) return ['dismiss'];
  if (!(OPEN_STATUSES as readonly string[]).includes(c.status)) return [];
  if (c.sourceType === DELIVERY_QUESTION_SOURCE) return ['choose'];
  if (isMailCard(c)) return ['send', 'request_changes', 'snooze', 'dismiss'];
  if (c.kind === 'question') return ['answer', 'approve', 'snooze', 'dismiss'];
  if (c.kind === 'choice') return ['choose', 'snooze', 'dismiss'];
  return ['approve', 'request_changes', 'snooze', 'dismiss'];
}

const CLOSED_LABELS: Record<string, string> = {
  needs_revision: 'Revising',
  sending: 'Sending',
  resolved: 'Done',
  sent: 'Sent',
  dismissed: 'Dismissed',
};

/** The label of the primary button: what pressing it does now. */
export function primaryLabelFor(c: ShapeInput): string {
  if (isRunningSequence(c)) return 'Running';
  // A send the mail relay refused for good (`resolved`: nothing went out), or one whose mail came back as a
  // hard bounce after the relay took it (`sent`): src/shipping/refusals.service.ts.
  if ((c.status === 'resolved' || c.status === 'sent') && (c.resolution as { bounced?: unknown } | null)?.bounced === true)
    return 'Bounced';
  const closed = CLOSED_LABELS[c.status];
  if (closed) return closed;
  if (c.sourceType === DELIVERY_QUESTION_SOURCE) return 'Confirm delivery';
  if (c.sourceType === 'mail_reply') return 'Send reply';
  if (isMailCard(c)) return 'Send';
  if (c.kind === 'question') return 'Answer';
  if (c.kind === 'choice') return 'Choose';
  if (isBudgetCard(c)) return 'Approve spend';
  return 'Approve';
}

const SOURCE_WORK: Record<string, KindOfWork> = {
  mail_draft: 'email',
  mail_reply: 'email',
  sequence: 'sequence',
  network_message: 'network_message',
  blog_post: 'blog_post',
  ad_test: 'ad_test',
  budget_change: 'spend',
  experiment: 'experiment',
};

/** The kind of work a card ships, or null (questions, choices, proposals ship nothing themselves). */
export function kindOfWorkFor(c: { sourceType: string; payload?: Record<string, unknown>; budgetChange?: unknown }): KindOfWork | null {
  if (isBudgetCard(c)) return 'spend';
  const declared = c.payload?.work;
  if (typeof declared === 'string' && (KINDS_OF_WORK as readonly string[]).includes(declared)) return declared as KindOfWork;
  return SOURCE_WORK[c.sourceType] ?? null;
}

/** Options as `{ value, label }`; plain strings (as the agent's tool writes them) become both. */
export function normaliseOptions(options: unknown): Option[] | null {
  if (!Array.isArray(options)) return null;
  const out: Option[] = [];
  for (const o of options) {
    if (typeof o === 'string') out.push({ value: o, label: o });
    else if (o && typeof o === 'object' && typeof (o as Option).value === 'string') {
      const v = o as Option;
      out.push({ value: v.value, label: typeof v.label === 'string' ? v.label : v.value });
    }
  }
  return out;
}

/**
 * SQL ordering of the priority bands, most urgent first: `urgent`, `high`, `normal`, `low` (unknown bands
 * sort with `normal`); the queue sorts by band, then newest first.
 */
export const PRIORITY_ORDER_SQL = `case priority when 'urgent' then 0 when 'high' then 1 when 'normal' then 2 when 'low' then 3 else 2 end`;
