/**
 * A process that dies between a card write's commit and its post-bump (test/review/queue-cache.test.ts):
 * it adds a card to ACCOUNT in a transaction (the pre-bump marks the write in flight), cuts its Redis
 * connection before the commit so the post-bump after it cannot land, prints `committed` and kills
 * itself with SIGKILL. Run with the test file's environment (envFor): `card-write-then-die.ts ACCOUNT TITLE`.
 */
import { loadConfig } from '../../src/config.js';
import { createDeps } from '../../src/deps.js';
import { newId } from '../../src/ids.js';
import { createLogger } from '../../src/logger.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';

const [accountId, title] = process.argv.slice(2) as [string, string];
const deps = createDeps(loadConfig(), createLogger('silent'));
await deps.ready();
await deps.db.transaction(async (trx) => {
  await cardsRepository(trx).insert({
    id: newId('card'),
    accountId,
    kind: 'approval',
    sourceType: 'agent_approval',
    title,
    payload: {},
    actions: [],
    primaryLabel: '',
    ladderChecked: true,
  });
  deps.redis.disconnect();
});
process.stdout.write('committed\n');
process.kill(process.pid, 'SIGKILL');
