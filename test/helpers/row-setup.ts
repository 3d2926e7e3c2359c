import type { TestEnv } from './env.js';

/**
 * Setup of rows no service writes that way, for sweep and retention tests. `backdate` sets columns of rows a
 * service already wrote to what time or earlier passes would have left (received long ago, tries used up, bytes
 * dropped by retention): `backdate(env, 'inbound_messages', { id: [a, b] }, { received_at: 0 })`. `overwrite` sets
 * columns to what nothing in the service writes at all (a sealed key damaged, a row made inconsistent). `removeRows`
 * takes rows away as nothing in the service does (an account gone, a table emptied before a cap test). `seedRows`
 * writes rows as no service writes them (a delivery log older than retention keeps, a body that is not JSON). A `where`
 * value that is an array matches any of its values; an empty `where` every row.
 */
type World = Pick<TestEnv, 'deps'>;
type Where = Record<string, unknown>;

const matching = (env: World, table: string, where: Where) => {
  let q = env.deps.db(table);
  for (const [column, value] of Object.entries(where)) q = Array.isArray(value) ? q.whereIn(column, value) : q.where({ [column]: value });
  return q;
};

const update = (env: World, table: string, where: Where, set: Record<string, unknown>) => matching(env, table, where).update(set);

/** Columns set to what time or earlier passes would have left. */
export const backdate = update;

/** Columns set to what nothing in the service writes. */
export const overwrite = update;

export const removeRows = (env: World, table: string, where: Where = {}) => matching(env, table, where).del();

export const seedRows = (env: World, table: string, values: Record<string, unknown> | Record<string, unknown>[]) =>
  env.deps.db(table).insert(values);
