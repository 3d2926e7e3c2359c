import { describe, expect } from 'vitest';
import { it } from '../helpers/fixture.js';

/**
 * Ready for a Postgres sharded by account (Citus, docs/scaling.md "Distribution by account"): every table carries
 * `account_id`, and every primary key, unique index and foreign key includes it, so a row and everything it
 * points at live on the same shard. Read from the catalog after migrations.
 */

/** Global tables (Citus reference tables or coordinator-only): a foreign key to one of them is fine. */
const GLOBAL: Record<string, string> = {
  accounts: 'the tenants themselves: the reference table every account_id points at',
  knex_migrations: "the migrator's bookkeeping, on the coordinator only",
  knex_migrations_lock: "the migrator's lock, on the coordinator only",
  service_secrets: "the service's own keys (cookie and token signing), not an account's",
  dkim_keys: 'signing keys per sending domain of the service, shared by every account that sends from it',
  operator_mail: "mail to postmaster@ the inbound domain: the operator's, never an account's",
  sign_in_addresses: 'one sign-in address, one person, across every account: the sign-in form names no account',
  results_rollup_watermark: 'the one watermark of the rollup pass (per node on Citus: docs/decisions/results.md)',
};

/**
 * Breaks of the rule that are still there, each with why it stays. The list may only shrink: a new break, or a
 * fixed one still listed, fails the test.
 */
const NOT_YET: Record<string, string> = {};

const BREAKS = `
WITH t AS (SELECT c.oid, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND NOT (c.relname = ANY (:global))),
acc AS (SELECT attrelid, attnum FROM pg_attribute WHERE attname = 'account_id' AND NOT attisdropped)
SELECT relname || ': no account_id' AS b FROM t WHERE NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = t.oid)
UNION ALL
SELECT t.relname || ': ' || CASE WHEN i.indisprimary THEN 'primary key ' ELSE 'unique index ' END || ic.relname
  FROM t JOIN pg_index i ON i.indrelid = t.oid AND i.indisunique JOIN pg_class ic ON ic.oid = i.indexrelid
 WHERE NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = t.oid AND acc.attnum = ANY (i.indkey))
UNION ALL
SELECT t.relname || ': foreign key ' || co.conname || ' -> ' || co.confrelid::regclass::text
  FROM t JOIN pg_constraint co ON co.conrelid = t.oid AND co.contype = 'f'
 WHERE NOT (co.confrelid::regclass::text = ANY (:global))
   AND (NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = t.oid AND acc.attnum = ANY (co.conkey))
        OR NOT EXISTS (SELECT 1 FROM acc WHERE acc.attrelid = co.confrelid AND acc.attnum = ANY (co.confkey)))`;

describe('account key rule', () => {
  it('every table but the global ones carries account_id in its keys, unique indexes and foreign keys', async ({ env }) => {
    const { rows } = (await env.deps.db.raw(BREAKS, { global: Object.keys(GLOBAL) })) as { rows: { b: string }[] };
    const breaks = rows.map((r) => r.b).sort();
    expect(
      breaks.filter((b) => !(b in NOT_YET)),
      'tables that break the account key rule',
    ).toEqual([]);
    expect(
      Object.keys(NOT_YET).filter((b) => !breaks.includes(b)),
      'fixed: take them off NOT_YET',
    ).toEqual([]);
  });
});
