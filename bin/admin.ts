/** `npm run --silent admin -- <noun> <verb> [--flags]`: one JSON object on stdout, or `{"error"}` on stderr and exit 1. */
import { adminErrorMessage, runAdmin } from '../src/admin/commands.js';
import { loadConfig } from '../src/config.js';
import { createDb, prepareDatabase } from '../src/db.js';
import { preflight } from '../src/preflight.js';
import { nodeVersionProblem } from '../src/node-version.js';
import { registerCardWrites } from '../src/queue-version/card-writes.js';
import { createRedis, keyspace, whenReady } from '../src/redis.js';

async function main(): Promise<number> {
  const wrongRuntime = nodeVersionProblem();
  if (wrongRuntime) throw new Error(wrongRuntime);
  const config = loadConfig();
  const problems = await preflight(config);
  if (problems.length) throw new Error(problems.join(' '));
  await prepareDatabase(config);
  const db = createDb(config.databaseUrl, 2, undefined, config.databasePooler);
  // A verb that writes cards (seed demo) bumps the account's queue version, as every card write does.
  const redis = createRedis(config, 'producer');
  const cardWrites = registerCardWrites(db, {
    redis,
    keyspace: keyspace(config.queuePrefix),
    liveBacklog: config.liveUpdates.backlogEvents,
  });
  try {
    await whenReady(redis);
    const out = await runAdmin(process.argv.slice(2), { config, db });
    await cardWrites.settle();
    process.stdout.write(`${JSON.stringify(out)}\n`);
    return 0;
  } finally {
    redis.disconnect();
    await db.destroy();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`${JSON.stringify({ error: adminErrorMessage(err) })}\n`);
    process.exit(1);
  },
);
