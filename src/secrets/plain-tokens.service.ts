import type { SealingConfig } from '../config/sealing.js';
import type { Db } from '../db.js';
import { plainTokensRepository } from './plain-tokens.repository.js';
import { seal } from './sealed.js';

/** Rows one statement changes at most. */
const BATCH = 500;

/**
 * Forgets every reply token the previous version kept in clear: a thread keeps only its token's hash, a fence
 * its token sealed (a re-ship opens it). Run once every process runs this version: a process of the previous
 * version looks threads up by the plaintext. Safe to run again; every loop is bounded by the rows there were.
 */
export async function forgetPlainReplyTokens(db: Db, sealing: SealingConfig): Promise<{ threadsCleared: number; fencesSealed: number }> {
  const repo = plainTokensRepository(db);
  let threadsCleared = 0;
  for (let rounds = Math.ceil((await repo.countPlainThreads()) / BATCH) + 1; rounds > 0; rounds--) {
    const n = await repo.clearThreads(BATCH);
    threadsCleared += n;
    if (n < BATCH) break;
  }
  let fencesSealed = 0;
  const seen = new Set<string>();
  for (;;) {
    const page = (await repo.plainFences(BATCH)).filter((f) => !seen.has(f.id));
    if (!page.length) break;
    for (const f of page) {
      seen.add(f.id);
      if (await repo.sealFence(f, await seal(db, sealing, f.token))) fencesSealed++;
    }
  }
  return { threadsCleared, fencesSealed };
}
