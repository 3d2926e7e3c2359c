import { getAccount } from '../accounts/accounts.service.js';
import { BadRequest } from '../errors.js';
import { createInboundUrl, listInbound } from '../inbound/intake.service.js';
import { INBOUND_STATUSES, type InboundStatus } from '../inbound/inbound.types.js';
import { listOperatorMail, readOperatorMail } from '../inbound/operator-mail.service.js';
import { generateDkimKey, listDkimKeys, removeDkimKey } from '../mail/dkim.service.js';
import { setMailFrom } from '../mail/mail-settings.js';
import { createRedis, whenReady } from '../redis.js';
import { int, type Verb } from './verb.js';

/**
 * The mail loop's verbs. `mail inbound-url` prints the account's inbound URL once (a second
 * call replaces the secret); `mail inbound-list` shows received messages without their bytes or text;
 * `mail dkim generate|list|remove` manage the DKIM keys outgoing mail is signed with; `mail sender set`
 * gives the account's mail its own From; `mail postmaster-list|read` show the operator mail sent to postmaster@.
 */
export const MAIL_VERBS: Record<string, Verb> = {
  'mail inbound-url': {
    flags: ['account'],
    async run(f, { db, config }) {
      // The new secret is announced in Redis (the door's registry of live secrets) before it is stored.
      const redis = createRedis(config, 'producer');
      try {
        await whenReady(redis);
        return await createInboundUrl({ db, redis, config }, f.account!);
      } finally {
        redis.disconnect();
      }
    },
  },
  'mail inbound-list': {
    flags: ['account?', 'status?', 'limit?'],
    async run(f, { db }) {
      const status = f.status;
      if (status !== undefined && !(INBOUND_STATUSES as readonly string[]).includes(status))
        throw new BadRequest(`--status must be one of ${INBOUND_STATUSES.join(', ')}`);
      if (f.account !== undefined) await getAccount(db, f.account);
      const limit = int(f.limit, 'limit', 1, 1000, 50);
      return { messages: await listInbound(db, { accountId: f.account, status: status as InboundStatus | undefined, limit }) };
    },
  },
  // Mail to postmaster@ the inbound domain, kept for the operator (no account's): listed without bytes, read one at a time.
  'mail postmaster-list': {
    flags: ['limit?'],
    async run(f, { db }) {
      return { messages: await listOperatorMail(db, int(f.limit, 'limit', 1, 1000, 50)) };
    },
  },
  'mail postmaster-read': {
    flags: ['id'],
    async run(f, { db }) {
      return { message: await readOperatorMail(db, f.id!) };
    },
  },
  // DKIM keys of the sending domains: the private key is made and kept here and never printed; the verbs
  // print the DNS TXT record to publish (`record`, a zone-file line; `value`, for a DNS provider's form).
  'mail dkim generate': {
    flags: ['domain', 'selector'],
    async run(f, { db, config }) {
      return { dkim: await generateDkimKey(db, config.sealing, f.domain!, f.selector!) };
    },
  },
  'mail dkim list': {
    flags: [],
    async run(_f, { db }) {
      return { keys: await listDkimKeys(db) };
    },
  },
  'mail dkim remove': {
    flags: ['domain', 'selector'],
    async run(f, { db }) {
      return { ok: true, removed: await removeDkimKey(db, f.domain!, f.selector!) };
    },
  },
  // The account's sending identity: the From of its mail, at a domain in MAIL_ALLOWED_FROM_DOMAINS.
  'mail sender set': {
    flags: ['account', 'from'],
    async run(f, { db, config }) {
      const { from } = await setMailFrom(db, config, f.account!, f.from!);
      return { account: { id: f.account! }, from };
    },
  },
};
