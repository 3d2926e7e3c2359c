import type { Config } from '../config.js';
import { type Db, inChunks } from '../db.js';
import type { Logger } from '../logger.js';
import { measurementRepository } from './measurement.repository.js';

/**
 * Maintenance step: bot and link-scanner visits are kept raw `LINK_BOT_VISIT_RETENTION_DAYS`. Older ones
 * are deleted oldest first in chunks (one short statement each), at most `maxChunks` per sweep, so one
 * sweep stays short however many piled up; the next sweep goes on. Their `scanner_click` counts stay in
 * the channel events, and counted visits (a person's, which a `gvid` or a conversion names) are never
 * touched. A browser's repeats and clicks over a limit are never written, so there is nothing of them to delete.
 */
export async function pruneBotVisits(
  deps: { config: Pick<Config, 'links'>; db: Db },
  log: Logger,
  now = Date.now(),
  opts = { chunk: 5_000, maxChunks: 20 },
): Promise<{ pruned: number }> {
  const repo = measurementRepository(deps.db);
  const before = now - deps.config.links.botVisitRetentionMs;
  const pruned = await inChunks((chunk) => repo.pruneBotVisits(before, chunk), opts);
  if (pruned) log.info({ pruned, before }, 'bot visits pruned');
  return { pruned };
}
