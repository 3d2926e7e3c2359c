import type { ActedBy, CardLiveEvent } from '../../queue-version/live-events.js';
import type { Card } from './card.js';
import type { CardChanges } from './card-changes.js';

// What the card repository's writes announce on the account's live stream (src/queue-version/live-events.ts).

/** Statuses a card is decided in: a write that moves it there is announced `decided`. */
const DECIDED = new Set(['resolved', 'dismissed', 'sending', 'sent']);

/** Who a write without a named actor was made by, from the decision it records. */
const DECIDERS: Record<string, ActedBy> = {
  trust_ladder: 'the trust ladder',
  setting: 'an approval setting',
  system: 'the service',
  person: 'a person',
};

export const filed = (card: Card): CardLiveEvent => ({
  type: 'card.filed',
  cardId: card.id,
  kind: card.kind,
  status: card.status,
  decided: false,
  by: card.turnId ? 'the agent' : 'the service',
  at: card.createdAt,
});

export function updated(card: Card | null, changes: CardChanges, actedBy: ActedBy | undefined): CardLiveEvent | null {
  if (!card) return null;
  const decider = (changes.resolution as { by?: unknown } | null | undefined)?.by;
  return {
    type: 'card.updated',
    cardId: card.id,
    kind: card.kind,
    status: card.status,
    decided: changes.status !== undefined && DECIDED.has(changes.status),
    by: actedBy ?? (typeof decider === 'string' ? (DECIDERS[decider] ?? decider) : 'the service'),
    at: card.updatedAt,
  };
}
