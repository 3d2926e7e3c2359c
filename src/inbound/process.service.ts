import type { Deps } from '../deps.js';

/** What parsing and applying a received message needs. */
export type InboundDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues'>;

/**
 * Parses one stored message (`inbound_messages.id`), matches it to a send, classifies it and applies
 * the outcome. Built by the parse/match/classify part of issue 16; until then every message stays `received`.
 */
export async function processInbound(_deps: InboundDeps, _id: string): Promise<void> {
  throw new Error('processInbound is not built yet');
}
