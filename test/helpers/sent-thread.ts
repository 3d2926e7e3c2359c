import type { Config } from '../../src/config.js';
import type { Queryable } from '../../src/db.js';
import { replyTokenOf } from '../../src/mail/outbound.js';
import { threadsRepository, type Thread } from '../../src/mail/threads.repository.js';

/**
 * A shipped mail's thread with the reply token its mail carried: the database keeps only the token's hash, so
 * the token is opened from its fence's sealed copy with the file's sealing keys, as a re-ship does.
 */
export async function sentThread(db: Queryable, config: Config, sendId: string): Promise<(Thread & { replyToken: string }) | null> {
  const thread = await threadsRepository(db).bySend(sendId);
  if (!thread) return null;
  const fence = (await db('shipments').where({ id: sendId }).first('details')) as { details: Record<string, unknown> | null };
  const replyToken = await replyTokenOf(db, config, fence.details ?? {});
  if (!replyToken) throw new Error(`send ${sendId} carries no reply token`);
  return { ...thread, replyToken };
}
