/**
 * The step every proposal ends in, whatever varies (experiments.service.ts, experiment-ad.ts,
 * experiment-post-title.ts): the `experiment` card filed and the experiment stored, in one transaction.
 */
import type { Db } from '../../db.js';
import { type Experiment, experimentsRepository } from '../../experiments/experiments.repository.js';
import { fileWork } from '../tools/file-work.js';

/** Who proposes: the account, the turn (none for a person's tool call) and whether outside data led to it. */
export interface Proposer {
  accountId: string;
  turnId: string | null;
  fromOutside: boolean;
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
      work: 'experiment',
      title: f.title.slice(0, 200),
      details: { experimentId: f.id, thing: f.thing, topic: f.topic, ...f.details },
      prompt: (needs) => ({ prompt: f.prompt(needs) }),
    });
    await experimentsRepository(trx).insert({
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
