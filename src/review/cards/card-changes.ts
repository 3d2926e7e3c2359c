import type { Card } from './card.js';
import { payloadColumns } from './payload.js';

const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/** Fields a transition may set, in TypeScript names. */
export type CardChanges = Partial<
  Pick<
    Card,
    | 'status'
    | 'title'
    | 'summary'
    | 'prompt'
    | 'detail'
    | 'payload'
    | 'autoResolveAt'
    | 'snoozedUntil'
    | 'resolvedAt'
    | 'resolution'
    | 'ladderChecked'
    | 'fromOutside'
    | 'version'
    | 'history'
    | 'requestedChanges'
    | 'revisionDueAt'
    | 'revisionTurnId'
  >
>;

const COLUMN: Record<keyof CardChanges, string> = {
  status: 'status',
  title: 'title',
  summary: 'summary',
  prompt: 'prompt',
  detail: 'detail',
  payload: 'payload',
  autoResolveAt: 'auto_resolve_at',
  snoozedUntil: 'snoozed_until',
  resolvedAt: 'resolved_at',
  resolution: 'resolution',
  ladderChecked: 'ladder_checked',
  fromOutside: 'from_outside',
  version: 'version',
  history: 'history',
  requestedChanges: 'requested_changes',
  revisionDueAt: 'revision_due_at',
  revisionTurnId: 'revision_turn_id',
};
const JSON_FIELDS = new Set<keyof CardChanges>(['detail', 'payload', 'resolution', 'history']);

export function toRow(changes: CardChanges, at: number): Record<string, unknown> {
  const row: Record<string, unknown> = { updated_at: at };
  for (const [k, v] of Object.entries(changes) as [keyof CardChanges, unknown][]) {
    if (v === undefined) continue;
    if (k === 'payload') Object.assign(row, payloadColumns(v));
    else row[COLUMN[k]] = JSON_FIELDS.has(k) ? json(v) : v;
  }
  return row;
}
