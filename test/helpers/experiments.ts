import { proposeExperiment } from '../../src/experiments/experiments.service.js';
import { cardShape } from '../../src/review/file-work.service.js';
import type { Db } from '../../src/db.js';
import { newId } from '../../src/ids.js';
import { addCard } from '../../src/review/cards/doors.js';
import { buildLead } from './factories.js';

/**
 * A small mail subject experiment and the cards deciding it, for the tests of what a decision sets off (the
 * `card.decided` event's follow-ups: a winner adopted, a proposal dismissed). Made through the experiments service
 * and the review doors, as the agent and the scoreboard make them.
 */

export const SUBJECT_DRAFT = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
export const CHALLENGER = 'Quick question about onboarding';
/** Enough contacts for proposeSubjectTest's plan (a 10% baseline, a 25-point effect) with room for an uneven split. */
export const SUBJECT_TEST_AUDIENCE = 214;

/** `SUBJECT_TEST_AUDIENCE` never-mailed contacts, each in a lead of its own, written side by side a batch at a time. */
export async function subjectTestAudience(db: Db, accountId: string, tag = 'p'): Promise<void> {
  for (let from = 0; from < SUBJECT_TEST_AUDIENCE; from += 50) {
    const batch = Array.from({ length: Math.min(50, SUBJECT_TEST_AUDIENCE - from) }, (_, k) => from + k);
    await Promise.all(batch.map((i) => buildLead(db, accountId, { contacts: [{ email: `${tag}${i}@${tag}${i}.test` }] })));
  }
}

/** A proposed subject experiment on `topic` (its card pending), over an audience subjectTestAudience made. */
export async function proposeSubjectTest(db: Db, accountId: string, topic = 'onboarding'): Promise<{ id: string; cardId: string }> {
  const out = await proposeExperiment(
    db,
    { accountId, turnId: null, fromOutside: false },
    { thing: 'mail_subject', topic, draft: SUBJECT_DRAFT, challengers: [CHALLENGER], baselineRate: 0.1, minimumDetectableEffect: 0.25 },
  );
  if (typeof out === 'string') throw new Error(out);
  return out;
}

/** The scoreboard's card proposing B (CHALLENGER) as the default for `topic`; with `autoResolveAt`, the ladder's due one. */
export async function winnerCard(db: Db, accountId: string, experimentId: string, opts: { topic?: string; autoResolveAt?: number } = {}) {
  const topic = opts.topic ?? 'onboarding';
  const at = opts.autoResolveAt;
  return addCard(db, {
    id: newId('card'),
    accountId,
    kind: 'approval',
    turnId: null,
    ...cardShape('approval', 'experiment_result'),
    sourceType: 'experiment_winner',
    title: `Use B as the subject for "${topic}"`,
    summary: 'B did better',
    prompt: 'Approve to make B the default.',
    payload: { experimentId, thing: 'mail_subject', topic, winner: 'B', value: CHALLENGER },
    ...(at === undefined ? {} : { autoResolveAt: at, ladderChecked: true, detail: { autoResolve: { at, by: 'trust_ladder' } } }),
  });
}
