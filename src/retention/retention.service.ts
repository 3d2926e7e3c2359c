import type { Knex } from 'knex';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import type { Logger } from '../logger.js';
import { RETENTION_KINDS, type RetentionKind } from './kinds.js';
import { dropPartition, expiredPartitions, makePartition, missingAhead, PARTITIONED } from './partitions.js';

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
  /** Month partitions made ahead and dropped whole (src/retention/partitions.ts). */
  partitions: { made: string[]; dropped: string[] };
}

const LOCK_NOT_AVAILABLE = '55P03';
/** A partition DDL that is moot: its month is in the default partition, or another pass made or dropped it first. */
const MOOT_DDL = new Set(['23514', '42P07', '42P01']);

const pick = ({ batchRows, passBatches }: PassOptions) => ({
  ...(batchRows === undefined ? {} : { batchRows }),
  ...(passBatches === undefined ? {} : { passBatches }),
});

/**
 * A short transaction of its own: a `lock_timeout` so it gives up rather than queue behind a writer (and make the
 * writers behind it queue too), and `growth.retention` on so the rollup triggers keep the counts of what it deletes
 * (docs/decisions/retention.md). Answers what `fn` answers, or null when a lock was not free in time.
 */
async function short<T>(db: Db, lockTimeoutMs: number, fn: (trx: Knex.Transaction) => Promise<T>): Promise<T | null> {
  try {
    return await db.transaction(async (trx) => {
      await trx.raw(`SELECT set_config('lock_timeout', ?, true), set_config('growth.retention', 'on', true)`, [`${lockTimeoutMs}ms`]);
      return fn(trx);
    });
  } catch (e) {
    if ((e as { code?: string }).code === LOCK_NOT_AVAILABLE) return null;
    throw e;
  }
}

/** One batch of a kind: the rows handled, or null when a lock was not free. */
const oneBatch = (db: Db, config: Config['retention'], kind: RetentionKind, before: number) =>
  short(db, config.lockTimeoutMs, (trx) => kind.batch(trx, before, config.batchRows));

/**
 * The month partitions of each partitioned table: those ahead made, those wholly past the table's retention dropped,
 * each DDL a short transaction under the lock timeout (it needs the table's lock for a moment). A month the default
 * partition already holds rows of is left there and its rows go by batches; one another pass made or dropped first is
 * passed over; one still holding rows the table keeps (channel events not folded yet) waits for a later pass.
 */
async function keepPartitions(deps: { config: Config; db: Db }, now: number, skipped: string[]) {
  const made: string[] = [];
  const dropped: string[] = [];
  const ddl = async (name: string, fn: (trx: Knex.Transaction) => Promise<boolean>) => {
    try {
      const done = await short(deps.db, deps.config.retention.lockTimeoutMs, fn);
      if (done === null) skipped.push(name);
      return done === true;
    } catch (e) {
      if (MOOT_DDL.has((e as { code?: string }).code ?? '')) return false;
      throw e;
    }
  };
  for (const { table, kind, held } of PARTITIONED) {
    const keep = RETENTION_KINDS.find((k) => k.name === kind)!.keepMs(deps.config);
    for (const m of await missingAhead(deps.db, table, now))
      if (await ddl(m.name, (trx) => makePartition(trx, table, m).then(() => true))) made.push(m.name);
    const expired = keep === null ? [] : await expiredPartitions(deps.db, table, now - keep);
    for (const m of expired) if (await ddl(m.name, (trx) => dropPartition(trx, table, m, held))) dropped.push(m.name);
  }
  return { made, dropped };
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
  const partitions = opts.only ? { made: [], dropped: [] } : await keepPartitions(deps, now, skipped);
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
  if (skipped.length || partitions.dropped.length || Object.values(removed).some((n) => n > 0)) {
    log.info({ removed, skipped, partitions }, 'retention pass');
  }
  return { removed, skipped, partitions };
}
