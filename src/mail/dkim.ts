import { createPublicKey, generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import DKIM from 'nodemailer/lib/dkim';
import type { SealingConfig } from '../config/sealing.js';
import type { Queryable } from '../db.js';
import { unseal } from '../secrets/sealed.js';
import { dkimRepository } from './dkim.repository.js';
import { NotSent } from './mail.types.js';

/**
 * The header fields every signature covers, when the message has them: what a mailbox provider checks
 * (From, To, Subject, Date, Message-ID), the thread (In-Reply-To, References, Reply-To, whose
 * `reply+` token routes the answer), one-click unsubscribe (RFC 8058 asks that both List-Unsubscribe
 * fields be signed) and the MIME fields that say how to read the signed body.
 */
export const DKIM_HEADER_FIELDS = [
  'From',
  'To',
  'Subject',
  'Date',
  'Message-ID',
  'In-Reply-To',
  'References',
  'Reply-To',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
].join(':');

/** RSA modulus of a generated key: 2048 bits, what every large provider accepts and RFC 8301 recommends. */
export const DKIM_KEY_BITS = 2048;

/** Signs raw messages whose From domain has keys; a message of any other domain goes out as it is. */
export type DkimSign = (raw: Buffer, from: string) => Promise<Buffer>;

/** The lowercased domain of `Name <a@b>` or `a@b` ('' when there is none). */
export function fromDomainOf(from: string): string {
  const address = (/<([^>]+)>/.exec(from)?.[1] ?? from).trim();
  const at = address.lastIndexOf('@');
  return at < 0 ? '' : address.slice(at + 1).toLowerCase();
}

/** A new RSA key pair: the private key as PKCS#8 PEM, the public one as base64 SPKI DER (a TXT record's `p=`). */
export async function newDkimKeyPair(): Promise<{ privateKey: string; publicKey: string }> {
  const { privateKey, publicKey } = await promisify(generateKeyPair)('rsa', {
    modulusLength: DKIM_KEY_BITS,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return { privateKey, publicKey: publicKey.toString('base64') };
}

/** The DNS name, TXT value and zone-file line (strings of at most 255 characters, as DNS requires) of a key. */
export function dkimTxtRecord(domain: string, selector: string, publicKey: string) {
  // Parsing checks that what is published is a real key.
  createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
  const name = `${selector}._domainkey.${domain}`;
  const value = `v=DKIM1; k=rsa; p=${publicKey}`;
  const strings = value.match(/.{1,255}/g) ?? [];
  return { name, value, record: `${name} IN TXT ${strings.map((s) => `"${s}"`).join(' ')}` };
}

interface SigningKey {
  domainName: string;
  keySelector: string;
  privateKey: string;
}

/** The message with one DKIM-Signature per key (relaxed/relaxed, rsa-sha256) over DKIM_HEADER_FIELDS. */
export function signRaw(raw: Buffer, keys: SigningKey[]): Promise<Buffer> {
  const signed = new DKIM({ keys, headerFieldNames: DKIM_HEADER_FIELDS }).sign(raw);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    signed.on('data', (c: Buffer) => chunks.push(c));
    signed.on('error', reject);
    signed.on('end', () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * The signer the SMTP and local transports use: every key of the From domain (newest first; during a
 * rotation the old selector's signature still verifies until the new record is published). A key that
 * cannot be read or used means nothing is sent (NotSent, worth a retry): mail of a signing domain never
 * goes out unsigned. The private key is unsealed for the signature only, never logged.
 */
export function dkimSigner(db: Queryable, sealing: SealingConfig): DkimSign {
  return async (raw, from) => {
    const domain = fromDomainOf(from);
    if (!domain) return raw;
    try {
      const rows = await dkimRepository(db).forDomain(domain);
      if (!rows.length) return raw;
      const keys = await Promise.all(
        rows.map(async (r) => ({
          domainName: r.domain,
          keySelector: r.selector,
          privateKey: await unseal(db, sealing, r.private_key_sealed),
        })),
      );
      return await signRaw(raw, keys);
    } catch (err) {
      throw new NotSent(`mail from ${domain} could not be DKIM-signed: ${(err as Error).message}`);
    }
  };
}
