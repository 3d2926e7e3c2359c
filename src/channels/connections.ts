import type { SealingConfig } from '../config/sealing.js';
import type { Queryable } from '../db.js';
import { BadRequest, NotFound } from '../errors.js';
import { connectChannel, disconnectChannel } from '../results/channel-events.js';
import { seal, unseal } from '../secrets/sealed.js';

export const CONNECTION_KINDS = ['network', 'ads'] as const;
export type ConnectionKind = (typeof CONNECTION_KINDS)[number];
export const CONNECTION_TRANSPORTS = ['http'] as const;
export type ConnectionTransport = (typeof CONNECTION_TRANSPORTS)[number];

/** A connection as it is shown: never its key. */
export interface Connection {
  accountId: string;
  kind: ConnectionKind;
  transport: ConnectionTransport;
  url: string;
}

/** A connection with its key unsealed, for the adapter that talks to the provider (never printed). */
export interface OpenConnection extends Connection {
  key: string;
  pollCursor: string | null;
}

interface Row {
  account_id: string;
  kind: ConnectionKind;
  transport: ConnectionTransport;
  url: string;
  key_sealed: string;
  poll_cursor: string | null;
}

const shown = (r: Row): Connection => ({ accountId: r.account_id, kind: r.kind, transport: r.transport, url: r.url });

/** The base URL of a provider bridge: http(s), no credentials, query or fragment; without a trailing slash. */
export function bridgeUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new BadRequest('--url must be an absolute http or https URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new BadRequest('--url must be an absolute http or https URL');
  if (url.username || url.password) throw new BadRequest('--url must not carry credentials; give the key with --key');
  if (url.search || url.hash) throw new BadRequest('--url must not have a query or fragment');
  return url.toString().replace(/\/+$/, '');
}

export interface ConnectInput {
  accountId: string;
  kind: string;
  transport: string;
  url: string;
  key: string;
}

/** Connects (or re-connects, replacing url and key) one kind of provider on an account, and its `/results` channel. */
export async function connectProvider(q: Queryable, sealing: SealingConfig, input: ConnectInput, at: number): Promise<Connection> {
  if (!(CONNECTION_KINDS as readonly string[]).includes(input.kind))
    throw new BadRequest(`--kind must be one of ${CONNECTION_KINDS.join(', ')}`);
  if (!(CONNECTION_TRANSPORTS as readonly string[]).includes(input.transport))
    throw new BadRequest(`--transport must be one of ${CONNECTION_TRANSPORTS.join(', ')}`);
  const url = bridgeUrl(input.url);
  const key = input.key.trim();
  if (!key || key.length > 4096 || /[\s]/.test(key)) throw new BadRequest('--key must be 1 to 4096 characters without spaces');
  const row = {
    account_id: input.accountId,
    kind: input.kind,
    transport: input.transport,
    url,
    key_sealed: await seal(q, sealing, key),
    poll_cursor: null,
    polled_at: null,
    created_at: at,
  };
  // A new URL is another provider: its events start from the beginning.
  await q('provider_connections').insert(row).onConflict(['account_id', 'kind']).merge();
  // `/results` reports the channel from now on (zeros until something happens).
  await connectChannel(q, input.accountId, input.kind as ConnectionKind, at);
  return shown(row as Row);
}

export async function listConnections(q: Queryable, accountId: string): Promise<Connection[]> {
  const rows = (await q('provider_connections').where({ account_id: accountId }).orderBy('kind')) as Row[];
  return rows.map(shown);
}

/** Removes one connection; 404 when the account has none of that kind. */
export async function disconnectProvider(q: Queryable, accountId: string, kind: string): Promise<void> {
  if (!(CONNECTION_KINDS as readonly string[]).includes(kind)) throw new BadRequest(`--kind must be one of ${CONNECTION_KINDS.join(', ')}`);
  const n = await q('provider_connections').where({ account_id: accountId, kind }).delete();
  if (!n) throw new NotFound();
  // `/results` says it is not connected; its events are kept.
  await disconnectChannel(q, accountId, kind as ConnectionKind);
}

export async function isConnected(q: Queryable, accountId: string, kind: ConnectionKind): Promise<boolean> {
  return Boolean(await q('provider_connections').where({ account_id: accountId, kind }).first('kind'));
}

/** The account's connection of this kind with its key, or null. */
export async function openConnection(
  q: Queryable,
  sealing: SealingConfig,
  accountId: string,
  kind: ConnectionKind,
): Promise<OpenConnection | null> {
  const row = (await q('provider_connections').where({ account_id: accountId, kind }).first()) as Row | undefined;
  if (!row) return null;
  return { ...shown(row), key: await unseal(q, sealing, row.key_sealed), pollCursor: row.poll_cursor };
}

/** Every account with a connection of this kind (the poll's fan-out), oldest polled first, at most `limit`. */
export async function connectedAccounts(q: Queryable, kind: ConnectionKind, limit: number): Promise<string[]> {
  const rows = (await q('provider_connections')
    .where({ kind })
    .orderByRaw('polled_at ASC NULLS FIRST')
    .limit(limit)
    .select('account_id')) as { account_id: string }[];
  return rows.map((r) => r.account_id);
}

/** Where the next poll of this connection goes on from (only when the connection is still the one polled: same url). */
export async function savePollCursor(q: Queryable, c: Connection, cursor: string | null, at: number): Promise<void> {
  await q('provider_connections')
    .where({ account_id: c.accountId, kind: c.kind, url: c.url })
    .update({ ...(cursor !== null ? { poll_cursor: cursor } : {}), polled_at: at });
}
