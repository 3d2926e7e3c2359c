import type { TestEnv } from './env.js';

/**
 * Reads of the service's tables for assertions, one way for every test: `rows(env, 'shipments', { card_id })`,
 * `row(env, 'leads', { id })`, and per-table helpers for the reads tests repeat most (a card, a turn, a lead by id;
 * the send and the sequence of a card). A table's name is written here once, so a renamed table is one edit.
 * Rows come back as the driver gives them (snake_case columns), so assertions read the columns they always did.
 * Writes and setup go through the factories and services (test/helpers/factories.ts), never through these.
 */
type World = Pick<TestEnv, 'deps'>;
type Where = Record<string, unknown>;

/** Every row of `table` matching `where` (all of them without one). */
export const rows = (env: World, table: string, where: Where = {}) => env.deps.db(table).where(where);

/** The first row of `table` matching `where`, or undefined. */
export const row = (env: World, table: string, where: Where) => env.deps.db(table).where(where).first();

/** A review card by id. */
export const cardRow = (env: World, id: string) => row(env, 'review_cards', { id });

/** An agent turn by id. */
export const turnRow = (env: World, id: string) => row(env, 'agent_turns', { id });

/** A lead by id. */
export const leadRow = (env: World, id: string) => row(env, 'leads', { id });

/** The shipment a card made (mail, network or ad: every kind of work is fenced in shipments). */
export const sendOfCard = (env: World, cardId: string) => row(env, 'shipments', { card_id: cardId });

/** The sequence a card started. */
export const sequenceOfCard = (env: World, cardId: string) => row(env, 'mail_sequences', { card_id: cardId });

/** The `card.decided` events recorded for a card (the outbox's rows, oldest first). */
export const eventsOfCard = (env: World, cardId: string) =>
  env.deps.db('events_outbox').whereRaw("payload->>'cardId' = ?", [cardId]).orderBy('created_at');

// --- reads for agent/review/measurement/experiments tests ---

/** How many rows of `table` match `where` (count(*)), as a number. */
export const countRows = async (env: World, table: string, where: Where = {}): Promise<number> =>
  Number((await env.deps.db(table).where(where).count<{ n: string }[]>({ n: '*' }))[0]?.n ?? 0);
