import type { Knex } from 'knex';

/**
 * Indexes the retention pass finds expired rows by, oldest first, without reading a whole table
 * (docs/decisions/retention.md). Built CONCURRENTLY (outside a transaction) so writers never wait on the build.
 */
export const config = { transaction: false };

const INDEXES: Array<[name: string, on: string]> = [
  ['channel_events_at', 'channel_events (at)'],
  ['visits_at', 'visits (at)'],
  ['conversions_occurred_at', 'conversions (occurred_at) WHERE aggregated_at IS NOT NULL'],
  ['audit_log_at', 'audit_log (at)'],
  ['agent_turns_finished_at', 'agent_turns (finished_at) WHERE finished_at IS NOT NULL'],
  ['review_cards_finished_at', "review_cards (resolved_at) WHERE status IN ('resolved', 'sent', 'dismissed')"],
  ['agent_model_calls_day', 'agent_model_calls (day)'],
  ['inbound_messages_received_at', 'inbound_messages (received_at)'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [name, on] of INDEXES) await knex.raw(`CREATE INDEX CONCURRENTLY IF NOT EXISTS ${name} ON ${on}`);
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of INDEXES) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}
