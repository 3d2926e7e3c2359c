import { parseArgs } from 'node:util';
import { createAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite, listAudit } from '../audit/audit.service.js';
import { removeFromBlocklist } from '../blocklist/blocklist.service.js';
import { setLeadColumns } from '../leads/leads.service.js';
import type { Config } from '../config.js';
import type { Db } from '../db.js';
import { AppError, BadRequest } from '../errors.js';
import { listTokens, mintToken, parseScopes, revokeToken } from '../tokens/tokens.service.js';
import { addDestination, listDestinationDeliveries, listDestinations, setAccountTimeZone } from '../workflows/destinations.service.js';

export interface AdminDeps {
  config: Config;
  db: Db;
}

type Flags = Record<string, string | undefined>;

interface Verb {
  /** Flag names; a trailing `?` marks an optional one. */
  flags: string[];
  run(flags: Flags, deps: AdminDeps): Promise<Record<string, unknown>>;
}

const int = (value: string | undefined, name: string, min: number, max: number, fallback: number): number => {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) throw new BadRequest(`--${name} must be an integer from ${min} to ${max}`);
  return Number(value);
};

/**
 * The admin CLI's verbs: the dashboard's jobs the API does not have. Operators script against these
 * names, flags and outputs; add verbs, never change one.
 */
export const VERBS: Record<string, Verb> = {
  'account create': {
    flags: ['name'],
    async run(f, { db }) {
      const account = await createAccount(db, f.name!);
      return { account: { id: account.id, name: account.name } };
    },
  },
  'token mint': {
    flags: ['account', 'label', 'scopes'],
    async run(f, { db, config }) {
      return mintToken(db, config.tokenPrefix, { accountId: f.account!, label: f.label!, scopes: parseScopes(f.scopes!) });
    },
  },
  'token revoke': {
    flags: ['token-id'],
    async run(f, { db }) {
      await revokeToken(db, f['token-id']!);
      return { ok: true };
    },
  },
  'token list': {
    flags: ['account'],
    async run(f, { db }) {
      return { tokens: await listTokens(db, f.account!) };
    },
  },
  'audit list': {
    flags: ['account', 'limit?'],
    async run(f, { db }) {
      const entries = await listAudit(db, f.account!, int(f.limit, 'limit', 1, 1000, 50));
      return { entries };
    },
  },
  'columns set': {
    flags: ['account', 'keys'],
    async run(f, { db }) {
      const columns = await auditedWrite(db, adminActor(f.account!, 'columns set'), async (trx) => ({
        result: await setLeadColumns(trx, f.account!, f.keys!.split(',')),
        targetId: f.account!,
      }));
      return { account: { id: f.account! }, columns };
    },
  },
  'blocklist remove': {
    flags: ['account', 'value'],
    async run(f, { db }) {
      const removed = await auditedWrite(db, adminActor(f.account!, 'blocklist remove'), async (trx) => {
        const entry = await removeFromBlocklist(trx, f.account!, f.value!);
        return { result: entry, targetId: entry.id };
      });
      return { ok: true, removed };
    },
  },
  // Workflows (issue 6): destinations a run's summary can be delivered to, and the schedules' time zone.
  'account set-time-zone': {
    flags: ['account', 'time-zone'],
    async run(f, { db }) {
      return { account: await setAccountTimeZone(db, f.account!, f['time-zone']!) };
    },
  },
  'destination add': {
    flags: ['account', 'name'],
    async run(f, { db }) {
      return { destination: await addDestination(db, f.account!, f.name!) };
    },
  },
  'destination list': {
    flags: ['account'],
    async run(f, { db }) {
      return { destinations: await listDestinations(db, f.account!) };
    },
  },
  'destination deliveries': {
    flags: ['account', 'name', 'limit?'],
    async run(f, { db }) {
      return { deliveries: await listDestinationDeliveries(db, f.account!, f.name!, int(f.limit, 'limit', 1, 200, 50)) };
    },
  },
};

/** Runs one verb from argv (`['token', 'mint', '--account', …]`); throws AppError or Error on refusal. */
export async function runAdmin(argv: string[], deps: AdminDeps): Promise<Record<string, unknown>> {
  const [noun, action, ...rest] = argv;
  const name = `${noun ?? ''} ${action ?? ''}`;
  const verb = VERBS[name];
  if (!verb) throw new BadRequest(`unknown command "${name.trim()}"; commands: ${Object.keys(VERBS).join(', ')}`);
  const options = Object.fromEntries(verb.flags.map((f) => [f.replace(/\?$/, ''), { type: 'string' as const }]));
  let values: Flags;
  try {
    values = parseArgs({ args: rest, options, strict: true, allowPositionals: false }).values as Flags;
  } catch (err) {
    throw new BadRequest((err as Error).message.split('\n')[0] ?? 'bad arguments');
  }
  for (const f of verb.flags.filter((f) => !f.endsWith('?'))) {
    if (!values[f]) throw new BadRequest(`--${f} is required`);
  }
  return verb.run(values, deps);
}

/** The message an operator sees for a refusal. */
export function adminErrorMessage(err: unknown): string {
  if (err instanceof AppError) return err.status === 409 && 'message' in err.body() ? String(err.body().message) : err.error;
  return (err as Error).message;
}
