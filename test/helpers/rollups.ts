import type { Db } from '../../src/db.js';
import { rollUpAll } from '../../src/results/rollups.service.js';
import { until } from './processes.js';

/**
 * Rolls up until the rollups have every event of the account: the watermark is the oldest running transaction of
 * the whole server, which another test file's transaction may hold back for a while (bounded: 30 s).
 */
export async function foldAccount(db: Db, accountId: string): Promise<void> {
  await until(
    async () => {
      await rollUpAll(db);
      const left = await db('channel_events')
        .where({ account_id: accountId })
        .whereRaw(`xid >= (SELECT xid FROM results_rollup_watermark WHERE name = 'results')`)
        .first();
      return left === undefined;
    },
    30_000,
    200,
  );
}
