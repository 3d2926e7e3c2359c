/**
 * The step every proposal ends in, whatever varies (experiments.service.ts for mail, each own-work kind's `propose`):
 * the `experiment` card filed through review (src/review/file-work.service.ts) and the experiment stored, in one
 * transaction.
 */
import type { Db } from '../db.js';
import { fileWork } from '../review/file-work.service.js';
import type { TurnReading } from '../review/outside-data.js';
import type { Experiment } from './experiment.js';
import { experimentRows } from './experiment-rows.js';

/**
 * Who proposes: the account, the turn (none for a person's tool call) and whether outside data led to it; with a turn,
 * how review reads it (the agent's `turnReading`, handed in by the propose tool).
 */
export interface Proposer {
  accountId: string;
  turnId: string | null;
  fromOutside: boolean;
  readTurn?: TurnReading;
}

export interface ExperimentFiling extends Pick<Experiment, 'id' | 'thing' | 'topic' | 'plan' | 'draft' | 'audience'> {
  /** The card's title (cut at 200 characters) and its details beside `experimentId`, `thing` and `topic`. */
  title: string;
  details: Record<string, unknown>;
  /** The card's words, given whether the account's settings make it wait for a person. */
  prompt: (needsApproval: boolean) => string;
}

/** Files the experiment's card and stores the experiment with it; answers both ids. */
export async function fileExperiment(db: Db, by: Proposer, f: ExperimentFiling): Promise<{ id: string; cardId: string }> {
  return db.transaction(async (trx) => {
    const { card } = await fileWork(trx, {
      accountId: by.accountId,
      turnId: by.turnId,
      fromOutside: by.fromOutside,
      ...(by.readTurn ? { readTurn: by.readTurn } : {}),
      work: 'experiment',
      title: f.title.slice(0, 200),
      details: { experimentId: f.id, thing: f.thing, topic: f.topic, ...f.details },
      prompt: (needs) => ({ prompt: f.prompt(needs) }),
    });
    await experimentRows(trx).insert({
      accountId: by.accountId,
      id: f.id,
      cardId: card.id,
      thing: f.thing,
      topic: f.topic,
      plan: f.plan,
      draft: f.draft,
      audience: f.audience,
      createdAt: Date.now(),
    });
    return { id: f.id, cardId: card.id };
  });
}
