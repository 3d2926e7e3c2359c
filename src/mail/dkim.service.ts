import type { SealingConfig } from '../config/sealing.js';
import type { Queryable } from '../db.js';
import { BadRequest, Rejected } from '../errors.js';
import { seal } from '../secrets/sealed.js';
import { dkimTxtRecord, newDkimKeyPair } from './dkim.js';
import { dkimRepository } from './dkim.repository.js';

/** Keys one domain may hold at once: the one in use, the next one of a rotation, and one spare. */
export const DKIM_KEYS_PER_DOMAIN = 3;

const DOMAIN = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/;
const SELECTOR = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

function checked(domain: string, selector: string): { domain: string; selector: string } {
  const d = domain.trim().toLowerCase().replace(/\.$/, '');
  const s = selector.trim().toLowerCase();
  if (!DOMAIN.test(d)) throw new BadRequest('--domain must be a domain name such as example.com');
  if (!SELECTOR.test(s)) throw new BadRequest('--selector must be one DNS label: letters, digits and hyphens, such as s2026');
  return { domain: d, selector: s };
}

const shown = (domain: string, selector: string, publicKey: string, createdAt: number) => ({
  domain,
  selector,
  ...dkimTxtRecord(domain, selector, publicKey),
  createdAt,
});

/**
 * Makes a DKIM key for `domain` under `selector` and keeps it (private key sealed); answers the DNS TXT
 * record to publish, never the private key. A selector the domain already has is refused (its record may
 * be published: replacing the key would break every signature until DNS caught up); rotation is a new
 * selector. Mail from the domain is signed with every key it has from the next send on.
 */
export async function generateDkimKey(q: Queryable, sealing: SealingConfig, domainFlag: string, selectorFlag: string, now = Date.now()) {
  const { domain, selector } = checked(domainFlag, selectorFlag);
  const repo = dkimRepository(q);
  if ((await repo.countFor(domain)) >= DKIM_KEYS_PER_DOMAIN) {
    throw new Rejected(`${domain} already has ${DKIM_KEYS_PER_DOMAIN} DKIM keys; remove one (mail dkim remove) before making another`);
  }
  const { privateKey, publicKey } = await newDkimKeyPair();
  const inserted = await repo.insert({
    domain,
    selector,
    private_key_sealed: await seal(q, sealing, privateKey),
    public_key: publicKey,
    created_at: now,
  });
  if (!inserted) throw new Rejected(`${domain} already has a DKIM key under selector ${selector}; rotate with a new selector`);
  return shown(domain, selector, publicKey, now);
}

/** Every domain's keys with their TXT records (public halves only). */
export async function listDkimKeys(q: Queryable) {
  return (await dkimRepository(q).listPublic()).map((r) => shown(r.domain, r.selector, r.public_key, r.created_at));
}

/** Forgets a key: mail is no longer signed with it (unpublish its record after the mail signed with it has been read). */
export async function removeDkimKey(q: Queryable, domainFlag: string, selectorFlag: string) {
  const { domain, selector } = checked(domainFlag, selectorFlag);
  if (!(await dkimRepository(q).remove(domain, selector))) throw new Rejected(`no DKIM key for ${domain} under selector ${selector}`);
  return { domain, selector };
}
