import { cannotShip } from '../channels/registry.js';
import type { Queryable } from '../db.js';
import { kindOfWorkFor } from './cards/card-shape.js';
import { cardsRepository, type Card, type NewCard } from './cards/cards.repository.js';
import { cardFromOutsideData } from './outside-data.js';

/**
 * Work of a kind the account lets run without approval (spend never qualifies): the card is recorded
 * already due, and the card-timers sweep ships it through the same fenced path as a person's verb,
 * recorded as decided by the setting. Callers that hold only a database handle (the agent's tools) use
 * this. Work prompted by outside data, and work no adapter can ship on this account, still waits as an
 * ordinary card (`autoResolveAt` null; the latter with a note saying which connection is missing).
 */
export async function shipBySetting(q: Queryable, card: NewCard): Promise<Card> {
  const at = Date.now();
  const work = card.kindOfWork ?? kindOfWorkFor({ sourceType: card.sourceType, payload: card.payload, budgetChange: card.budgetChange });
  if (!work || work === 'spend') throw new Error('spending always waits for a person');
  // Work a webhook payload prompted waits for a person whatever the setting (outside data is data).
  if (await cardFromOutsideData(q, card)) {
    return cardsRepository(q).insert({ ...card, kindOfWork: work, fromOutside: true, ladderChecked: true });
  }
  const missing = await cannotShip(q, card.accountId, work);
  if (missing) {
    return cardsRepository(q).insert({
      ...card,
      kindOfWork: work,
      ladderChecked: true,
      detail: { note: `Not shipped automatically: ${missing}; it waits for a person` },
    });
  }
  const reason = `This account lets ${work.replace(/_/g, ' ')} run without approval, so it ships right away; nobody needs to act.`;
  return cardsRepository(q).insert({
    ...card,
    kindOfWork: work,
    autoResolveAt: at,
    ladderChecked: true,
    detail: { autoResolve: { at, by: 'setting', reason } },
  });
}
