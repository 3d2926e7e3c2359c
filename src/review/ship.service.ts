import type { Queryable } from '../db.js';
import { agentRows } from './agent-rows.js';
import { kindOfWorkFor } from './card-shape.js';
import { cardsRepository, type Card, type NewCard } from './cards.repository.js';

/**
 * Work of a kind the account lets run without approval (spend never qualifies): the card is recorded
 * already due, and the card-timers sweep ships it through the same fenced path as a person's verb,
 * recorded as decided by the setting. Callers that hold only a database handle (the agent's tools) use
 * this. Work prompted by outside data still waits as an ordinary card (`autoResolveAt` null).
 */
export async function shipBySetting(q: Queryable, card: NewCard): Promise<Card> {
  const at = Date.now();
  const work = card.kindOfWork ?? kindOfWorkFor({ sourceType: card.sourceType, payload: card.payload, budgetChange: card.budgetChange });
  if (!work || work === 'spend') throw new Error('spending always waits for a person');
  // Work a webhook payload prompted waits for a person whatever the setting (outside data is data).
  if (card.fromOutside || (card.turnId && (await agentRows(q).turnFromOutside(card.accountId, card.turnId)))) {
    return cardsRepository(q).insert({ ...card, kindOfWork: work, fromOutside: true, ladderChecked: true });
  }
  const reason = `This account lets ${work.replace(/_/g, ' ')} run without approval, so it ships right away; nobody needs to act.`;
  return cardsRepository(q).insert({ ...card, kindOfWork: work, autoResolveAt: at, ladderChecked: true, detail: { autoResolve: { at, by: 'setting', reason } } });
}
