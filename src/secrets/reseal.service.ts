import type { SealingConfig } from '../config/sealing.js';
import type { Db } from '../db.js';
import { BadRequest } from '../errors.js';
import { countUnderDatabaseKey, replaceSealed, SEALED_COLUMNS, sealedPage } from './sealed-columns.repository.js';
import { DATABASE_SEAL_SECRET, resealed, sealedUnder, sealingKeyId } from './sealed.js';
import { forgetSecret } from './secrets.repository.js';

/** Rows read and re-sealed at once. */
const PAGE = 200;

export interface ResealReport {
  /** Values now under the newest key that were under another. */
  resealed: number;
  /** Values already under it. */
  current: number;
  /** Values changed by someone else while this ran (they were sealed under the newest key by that write). */
  changedMeanwhile: number;
  /** The newest key's id: every value is sealed under it now. */
  key: string;
  /** The database's own key was deleted: nothing is sealed under it any more. */
  databaseKeyRemoved: boolean;
}

/**
 * Re-seals every sealed value under the newest outside key, page by page (each value opened with whichever
 * key sealed it), then deletes the database's own key once nothing is sealed under it: from then on a copy
 * of the database opens nothing. Safe to run again (values already current are left alone) and beside a
 * running service (a value written meanwhile wins). Refused without an outside key.
 */
export async function resealAll(db: Db, sealing: SealingConfig): Promise<ResealReport> {
  const key = sealingKeyId(sealing);
  if (!key) throw new BadRequest('secrets reseal needs SEALING_KEYS or SEALING_KEYS_FILE: there is no outside key to seal under');
  let [done, current, changedMeanwhile] = [0, 0, 0];
  for (const column of SEALED_COLUMNS) {
    let after: string[] | null = null;
    for (;;) {
      const page = await sealedPage(db, column, after, PAGE);
      for (const v of page) {
        if (sealedUnder(v.sealed) === key) current++;
        else if (await replaceSealed(db, column, v, await resealed(db, sealing, v.sealed))) done++;
        else changedMeanwhile++;
      }
      if (page.length < PAGE) break;
      after = page.at(-1)!.key;
    }
  }
  const databaseKeyRemoved = (await countUnderDatabaseKey(db)) === 0 && (await forgetSecret(db, DATABASE_SEAL_SECRET));
  return { resealed: done, current, changedMeanwhile, key, databaseKeyRemoved };
}
