/**
 * The rule shipping asks before a card's work goes out: whether it must wait, and until when. Shipping is handed it
 * through its deps by the composition roots (the API's app, the worker pools, the test helpers that build either);
 * the one rule today is the experiments' send window (src/experiments/variants/send-window.ts `sendWindowHold`).
 * Shipping knows no experiment: it holds what the rule says and ships what it does not.
 */
import type { Trx } from '../db.js';
import type { Card } from '../review/cards/card.js';
import type { ReviewRules } from '../review/outside-data.js';
import type { ReviewDeps } from '../review/review.types.js';

/** The card waits: it goes out at `sendAt` (epoch ms); `window` names what it waits for, `note` says so in words. */
export interface Hold {
  sendAt: number;
  window: string;
  note: string;
}

/** Whether the card must wait at `now`; null: ship now. */
export type HoldRule = (card: Card, now: number) => Promise<Hold | null>;

/**
 * Called in the settling transaction when a card's work went out at `at` (the experiments count the exposure of an
 * experiment's mail: src/experiments/variants/send-window.ts `exposeExperimentMail`).
 */
export type OnSent = (trx: Trx, accountId: string, card: Card, at: number) => Promise<void>;

/** What the composition roots hand the shipping path (and review: how it reads a card's turn). */
export interface ShipRules extends ReviewRules {
  holdRule: HoldRule;
  onSent: OnSent;
}

/** What the shipping paths need: review's deps and the rules they are handed. */
export type ShipDeps = ReviewDeps & ShipRules;
