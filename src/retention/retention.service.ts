import type { Config } from '../config.js';
import type { Db } from '../db.js';
import type { Logger } from '../logger.js';
import { RETENTION_KINDS, type RetentionKind } from './kinds.js';

export interface PassOptions {
  now?: number;
  /** Only these kinds (by name); all by default. */
  only?: readonly string[];
  /** RETENTION_BATCH_ROWS and RETENTION_PASS_BATCHES for this pass (tests and benchmarks). */
  batchRows?: number;
  passBatches?: number;
}

/** Rows each kind removed (or, for raw bytes, emptied) in one pass; `skipped`: kinds a writer's lock held back. */
export interface PassCounts {
  removed: Record<string, number>;
  skipped: string[];
}

const LOCK_NOT_AVAILABLE = '55P03';

const pick = ({ batchRows, passBatches }: PassOptions) => ({
  ...(batchRows === undefined ? {} : { batchRows }),
  ...(passBatches === undefined ? {} : { passBatches }),
});

/**
 * One batch as a short transaction of its own: a `lock_timeout` so it gives up rather than queue behind a writer
 * (and make the writers behind it queue too), and `growth.retention` on so the rollup triggers keep the counts of
 * what it deletes (docs/decisions/retention.md). Answers the rows handled, or null when a lock was not free.
 */
async function oneBatch(db: Db, config: Config['retention'], kind: RetentionKind, before: number): Promise<number | null> {
  try {
    return await db.transaction(async (trx) => {
      await trx.raw(`SELECT set_config('lock_timeout', ?, true), set_config('growth.retention', 'on', true)`, [
        `${config.lockTimeoutMs}ms`,
      ]);
      return kind.batch(trx, before, config.batchRows);
    });
  } catch (e) {
    if ((e as { code?: string }).code === LOCK_NOT_AVAILABLE) return null;
    throw e;
  }
}

/**
 * The maintenance sweep's retention step: removes each kind's rows past its retention in short statements of
 * at most RETENTION_BATCH_ROWS, the kinds taking turns one statement each, so a kind with a large backlog does not
 * hold the others back. A kind stops when a statement finds fewer than a batch, after RETENTION_PASS_BATCHES
 * statements, or when a lock it needs is not free within RETENTION_LOCK_TIMEOUT_MS; the pass stops starting
 * statements after RETENTION_PASS_SECONDS. What is left waits for the next sweep. Answers the counts per kind.
 */
export async function runRetentionPass(deps: { config: Config; db: Db }, log: Logger, opts: PassOptions = {}): Promise<PassCounts> {
  const config = { ...deps.config.retention, ...pick(opts) };
  const now = opts.now ?? Date.now();
  const deadline = Date.now() + config.passMs;
  const removed: Record<string, number> = {};
  const skipped: string[] = [];
  let active = RETENTION_KINDS.flatMap((kind) => {
    const keep = kind.keepMs(deps.config);
    if (keep === null || (opts.only && !opts.only.includes(kind.name))) return [];
    removed[kind.name] = 0;
    return [{ kind, before: now - keep, batches: 0 }];
  });
  while (active.length && Date.now() < deadline) {
    for (const a of active) {
      if (Date.now() >= deadline) break;
      const n = await oneBatch(deps.db, config, a.kind, a.before);
      if (n === null) skipped.push(a.kind.name);
      removed[a.kind.name] = (removed[a.kind.name] ?? 0) + (n ?? 0);
      a.batches = n === null || n < config.batchRows ? Number.POSITIVE_INFINITY : a.batches + 1;
    }
    active = active.filter((a) => a.batches < config.passBatches);
  }
  if (skipped.length || Object.values(removed).some((n) => n > 0)) log.info({ removed, skipped }, 'retention pass');
  return { removed, skipped };
}
