import { parseArgs } from 'node:util';
import { createAccount, getAccount, isDemoAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite, listAudit } from '../audit/audit.service.js';
import { removeFromBlocklist } from '../blocklist/blocklist.service.js';
import { postCache } from '../content/post-cache.js';
import { listenUrl } from '../db.js';
import { setBlogBaseUrl } from '../content/posts.service.js';
import { leadSettings } from '../leads/lead-settings.js';
import { setLeadColumns } from '../leads/leads.service.js';
import type { Deps } from '../deps.js';
import { AppError, BadRequest, Rejected } from '../errors.js';
import {
  APPROVAL_MODES,
  approvalSettings,
  KINDS_OF_WORK,
  setApproval,
  type ApprovalMode,
  type KindOfWork,
} from '../review/approval.service.js';
import { changeApprovalMode } from '../review/approval-settings.js';
import { seedReviewCards } from '../review/seed.js';
import { trustLevels } from '../review/trust.service.js';
import { seedLeadsAndEvents } from '../leads/seed.js';
import { forgetPlainReplyTokens } from '../secrets/plain-tokens.service.js';
import { plainTokenStores, SEALED_COLUMNS } from './sealed-columns.js';
import { resealAll } from '../secrets/reseal.service.js';
import { listTokens, mintToken, parseScopes, revokeToken } from '../tokens/tokens.service.js';
import { addDestination, listDestinationDeliveries, listDestinations, setAccountTimeZone } from '../workflows/destinations.service.js';
import {
  createHook,
  deleteHook,
  disableHook,
  enableHook,
  listDeliveries,
  listHooks,
  regenerateHook,
  replayDelivery,
} from '../webhooks/webhooks.service.js';
import { withIntake } from '../webhooks/intake-deps.js';
import { withRedis } from '../redis.js';
import { CHANNEL_VERBS } from './channel-commands.js';
import { LEAD_VERBS } from './lead-commands.js';
import { MAIL_VERBS } from './mail-commands.js';
import { PERSON_VERBS } from './person-commands.js';
import { int, type Flags, type Verb } from './verb.js';

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
    async run(f, { db, config }) {
      await withRedis(config, (redis) => revokeToken({ db, redis, config }, f['token-id']!));
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
  // Inbound webhooks. The URL is printed once, by `create` and `regenerate`; never again.
  // Writes also need Redis: intake learns there which tokens are live (src/webhooks/live-hooks.ts).
  'hook create': {
    flags: ['account', 'label'],
    async run(f, { db, config }) {
      return withRedis(config, (redis) => createHook({ config, db, redis }, config.baseUrl, { accountId: f.account!, label: f.label! }));
    },
  },
  'hook disable': {
    flags: ['hook-id'],
    async run(f, { db, config }) {
      await withRedis(config, (redis) => disableHook({ config, db, redis }, f['hook-id']!));
      return { ok: true };
    },
  },
  'hook enable': {
    flags: ['hook-id'],
    async run(f, { db, config }) {
      await withRedis(config, (redis) => enableHook({ config, db, redis }, f['hook-id']!));
      return { ok: true };
    },
  },
  'hook regenerate': {
    flags: ['hook-id'],
    async run(f, { db, config }) {
      return withRedis(config, (redis) => regenerateHook({ config, db, redis }, config.baseUrl, f['hook-id']!));
    },
  },
  'hook delete': {
    flags: ['hook-id'],
    async run(f, { db, config }) {
      await withRedis(config, (redis) => deleteHook({ config, db, redis }, f['hook-id']!));
      return { ok: true };
    },
  },
  'hook list': {
    flags: ['account'],
    async run(f, { db }) {
      return { hooks: await listHooks(db, f.account!) };
    },
  },
  'hook deliveries': {
    flags: ['hook-id', 'limit?'],
    async run(f, { db }) {
      return { deliveries: await listDeliveries(db, f['hook-id']!, int(f.limit, 'limit', 1, 200, 50)) };
    },
  },
  'hook replay': {
    flags: ['delivery-id'],
    async run(f, { db, config }) {
      return withIntake(config, db, (deps) => replayDelivery(deps, f['delivery-id']!));
    },
  },
  // Review queue: approval settings per kind of work, the trust ladder, demo data.
  'settings get': {
    flags: ['account'],
    async run(f, { db, config }) {
      await getAccount(db, f.account!);
      return {
        account: { id: f.account! },
        approval: await approvalSettings(db, f.account!),
        trust: await trustLevels(db, f.account!),
        autoResolveAfter: config.review.trustThreshold,
        leads: await leadSettings(db, f.account!),
      };
    },
  },
  'settings set': {
    flags: ['account', 'kind', 'approval'],
    async run(f, { db }) {
      const kind = f.kind!;
      await getAccount(db, f.account!);
      if (!(KINDS_OF_WORK as readonly string[]).includes(kind)) throw new BadRequest(`--kind must be one of ${KINDS_OF_WORK.join(', ')}`);
      if (f.approval !== 'required' && f.approval !== 'auto') throw new BadRequest('--approval must be required or auto');
      if (kind === 'spend' && f.approval === 'auto')
        throw new BadRequest('spending always waits for a person; --kind spend cannot be auto');
      const actor = {
        accountId: f.account!,
        actor: 'admin' as const,
        tokenId: null,
        tokenLabel: null,
        method: 'CLI',
        route: 'settings set',
      };
      await auditedWrite(db, actor, async (trx) => ({
        result: await setApproval(trx, f.account!, kind as KindOfWork, f.approval === 'required'),
        targetId: f.account!,
      }));
      return { account: { id: f.account! }, kind, approval: f.approval };
    },
  },
  // The approval mode of a kind of work, as the dashboard's Approvals page sets it: always_ask, trust_ladder or ship.
  'approval set': {
    flags: ['account', 'kind', 'mode'],
    async run(f, { db, config }) {
      if (!(KINDS_OF_WORK as readonly string[]).includes(f.kind!))
        throw new BadRequest(`--kind must be one of ${KINDS_OF_WORK.join(', ')}`);
      if (!(APPROVAL_MODES as readonly string[]).includes(f.mode!))
        throw new BadRequest(`--mode must be one of ${APPROVAL_MODES.join(', ')}`);
      const actor = adminActor(f.account!, 'approval set');
      const item = await changeApprovalMode(db, config, actor, f.account!, f.kind as KindOfWork, f.mode as ApprovalMode);
      return { account: { id: f.account! }, approval: item };
    },
  },
  // Demo data goes only into a demo account (docs/decisions/demo-data.md): `--new-account NAME` makes one,
  // `--account ID` fills one made so (a real account is refused, nothing written).
  'seed demo': {
    flags: ['account?', 'new-account?'],
    async run(f, { db }) {
      const accountId = await demoAccountFor(db, f.account, f['new-account']);
      const cards = await seedReviewCards(db, accountId);
      const leads = await seedLeadsAndEvents(db, accountId);
      return { account: { id: accountId }, cards, leads };
    },
  },
  // Workflows: destinations a run's summary can be delivered to, and the schedules' time zone.
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
  // Where the account's site serves its posts: a post's canonical URL is it + slug.
  'content site-url': {
    flags: ['account', 'url'],
    async run(f, { db, config }) {
      const blogBaseUrl = await auditedWrite(db, adminActor(f.account!, 'content site-url'), async (trx) => ({
        result: await setBlogBaseUrl(trx, f.account!, f.url!),
        targetId: f.account!,
      }));
      postCache(listenUrl(config)).changed(f.account!);
      return { accountId: f.account!, blogBaseUrl };
    },
  },
  // Sealed secrets (provider keys, DKIM private keys): every one under the newest SEALING_KEYS key.
  'secrets reseal': {
    flags: [],
    async run(_f, { db, config }) {
      return { ...(await resealAll(db, config.sealing, SEALED_COLUMNS)) };
    },
  },
  // Reply tokens the previous version kept in clear: threads keep the hash, fences the sealed token.
  'secrets forget-reply-tokens': {
    flags: [],
    async run(_f, { db, config }) {
      return forgetPlainReplyTokens(db, config.sealing, plainTokenStores(db));
    },
  },
  // The mail loop: inbound URLs and received mail.
  ...MAIL_VERBS,
  ...LEAD_VERBS,
  ...PERSON_VERBS,
  // Provider connections: network and ads, each through a provider bridge.
  ...CHANNEL_VERBS,
};

/** Runs one verb from argv (`['token', 'mint', '--account', …]`); throws AppError or Error on refusal. */
export async function runAdmin(argv: string[], deps: Pick<Deps, 'config' | 'db'>): Promise<Record<string, unknown>> {
  // A verb is two words (`token mint`) or three (`mail sender set`).
  const three = argv.slice(0, 3).join(' ');
  const words = VERBS[three] ? 3 : 2;
  const name = VERBS[three] ? three : `${argv[0] ?? ''} ${argv[1] ?? ''}`;
  const rest = argv.slice(words);
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

/** The demo account `seed demo` fills: a new one named `name`, or `id` when it is a demo account. */
async function demoAccountFor(db: Deps['db'], id: string | undefined, name: string | undefined): Promise<string> {
  if (Boolean(id) === Boolean(name)) throw new BadRequest('give one of --account (a demo account) or --new-account (a name)');
  if (name) return (await createAccount(db, name, { demo: true })).id;
  await getAccount(db, id!);
  if (!(await isDemoAccount(db, id!)))
    throw new Rejected(
      `account ${id} is a real account: demo data goes only into a demo account, whose mail never leaves the machine; ` +
        'make one with `seed demo --new-account NAME`',
    );
  return id!;
}

/** The message an operator sees for a refusal. */
export function adminErrorMessage(err: unknown): string {
  if (err instanceof AppError) return err.status === 409 && 'message' in err.body() ? String(err.body().message) : err.error;
  return (err as Error).message;
}
