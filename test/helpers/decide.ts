/**
 * A process that decides one card through the review service, as a door would (the API's answer and dismiss
 * routes call the same functions): `decide.ts approve|dismiss ACCOUNT CARD`. Run with the test file's environment
 * (envFor) and EVENTS_PAUSE_BEFORE_QUEUE_MS raised, it commits the decision and its `card.decided` event, then waits
 * before queueing the delivery, so a test can kill -9 it in between.
 */
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { exposeExperimentMail, sendWindowHold } from '../../src/experiments/variants/send-window.js';
import { experimentAdapter } from '../../src/experiments/experiment.adapter.js';
import { registerAdapter } from '../../src/channels/registry.js';
import { turnReading } from '../../src/agent/core/doors.js';
import { createLogger } from '../../src/logger.js';
import { dismissCard } from '../../src/review/review.service.js';
import { answerAndShip } from '../../src/shipping/after-approval.js';

const [verb, accountId, cardId] = process.argv.slice(2) as ['approve' | 'dismiss', string, string];
// A composition root, as the API is: the shipping path is handed the send-window hold rule, and the channel registry
// the experiments' adapter, and review the agent's door to a card's turn.
registerAdapter('experiment', experimentAdapter);
const deps = {
  ...createDeps(loadConfig(), createLogger('silent')),
  holdRule: sendWindowHold,
  onSent: exposeExperimentMail,
  readTurn: turnReading,
};
await deps.ready();
const actor = {
  accountId,
  actor: 'api' as const,
  tokenId: null,
  tokenLabel: 'decide.ts',
  method: 'POST',
  route: `POST /api/v1/review/{id}/${verb === 'approve' ? 'answer' : 'dismiss'}`,
};
if (verb === 'approve') await answerAndShip(deps, actor, accountId, cardId, { action: 'approve' });
else await dismissCard(deps, actor, accountId, cardId, 'not now');
process.stdout.write('decided\n');
await deps.close();
