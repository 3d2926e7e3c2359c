import { getAccount } from '../accounts/accounts.service.js';
import { adminActor, auditedWrite, type Actor } from '../audit/audit.service.js';
import type { Config } from '../config.js';
import { fromDomain } from '../config/mail-identity.js';
import type { Db } from '../db.js';
import { listDkimKeys } from './dkim.service.js';
import { parseSender, senderOf, setAccountSender } from './sender-identity.js';

// An account's mail settings as a person sees them: who its mail is from, the DKIM record its From domain
// needs published, and where replies come in. Derived from what sending itself reads, never kept twice.

export interface MailSettings {
  /** The From the account's next mail carries (its own identity, or MAIL_FROM when it has none or its domain is no longer allowed). */
  from: string;
  /**
   * The From domain's newest DKIM key, the one to publish (mail is signed with every key the domain has);
   * `selector` and `record` null while the operator has made none (`mail dkim generate`).
   */
  dkim: { domain: string; selector: string | null; name: string | null; value: string | null; record: string | null };
  /**
   * Where replies arrive: each mail's Reply-To is `reply+<token>@` the inbound domain, a token per thread,
   * so the address is shown with the token as a placeholder.
   */
  inboundAddress: string;
}

export async function mailSettings(db: Db, config: Config, accountId: string): Promise<MailSettings> {
  await getAccount(db, accountId);
  const from = await senderOf(db, config, accountId);
  const domain = fromDomain(from);
  // Listed newest first within a domain: the first of this domain is the key a rotation publishes last.
  const key = (await listDkimKeys(db)).find((k) => k.domain === domain);
  return {
    from,
    dkim: key
      ? { domain, selector: key.selector, name: key.name, value: key.value, record: key.record }
      : { domain, selector: null, name: null, value: null, record: null },
    inboundAddress: `reply+<token>@${config.inbound.domain}`,
  };
}

/**
 * Gives the account's mail its own From (the one rule: `parseSender`), audited as `actor` (default the
 * operator's `mail sender set`); `field` names the input in a refusal (`--from`, or the dashboard's `from`).
 */
export async function setMailFrom(
  db: Db,
  config: Config,
  accountId: string,
  input: string,
  o: { field?: string; actor?: Actor } = {},
): Promise<{ from: string }> {
  await getAccount(db, accountId);
  const from = parseSender(config, input, o.field);
  await auditedWrite(db, o.actor ?? adminActor(accountId, 'mail sender set'), async (trx) => {
    await setAccountSender(trx, accountId, from);
    return { result: undefined, targetId: accountId };
  });
  return { from };
}
