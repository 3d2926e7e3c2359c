import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { describe, expect } from 'vitest';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { bounceAddress } from '../../src/inbound/smtp-recipients.js';
import type { DnsStandIn } from '../helpers/dns-server.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildThread } from '../helpers/factories.js';
import { deliverSmtp, mailedLeadAtOwnDomain, senderCheckEnv } from '../helpers/inbound-mail.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { rows } from '../helpers/rows.js';

// Mail received over our own SMTP listener with no token or thread header of ours (a fresh message to our
// visible address, the bounce address) is matched by its sender when one account alone mailed it; it may
// opt the lead out only when our own DKIM/SPF/DMARC check (mailauth, against the DNS stand-in on
// loopback) authenticates its From domain. The client is this test, on 127.0.0.1.

let ourAddress: string;
it.override('options', ({ dns }) => ({ env: senderCheckEnv(dns), pools: ['inbound-mail'] }));
it.beforeAll(({ env }) => {
  ourAddress = bounceAddress(env.deps.config)!;
});

/** An RSA key whose public half is published as `<selector>._domainkey.<domain>` in the DNS stand-in. */
function publishKey(dns: DnsStandIn, domain: string, selector = 's2026') {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const p = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
  dns.txt.set(`${selector}._domainkey.${domain}`, [`v=DKIM1; k=rsa; p=${p}`]);
  return { domain, selector, privateKey: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

/** DKIM-signs `raw` as the sender's provider does: the signature field on top. */
async function sign(raw: Buffer, key: ReturnType<typeof publishKey>): Promise<Buffer> {
  // mailauth signs what `signatureData` lists (its top-level signingDomain/selector/privateKey make no signature).
  const one = { signingDomain: key.domain, selector: key.selector, privateKey: key.privateKey };
  const res = await dkimSign(raw, { ...one, signatureData: [one] });
  expect(res.errors).toEqual([]);
  expect(res.signatures).toMatch(/^DKIM-Signature: /);
  return Buffer.concat([Buffer.from(res.signatures), raw]);
}

/**
 * A lead at a domain of its own (so no other account mailed its contact), mailed once by a fresh account;
 * the domain's DMARC record (p=reject) and an SPF record that permits nobody are published.
 */
async function world(env: TestEnv, dns: DnsStandIn) {
  const w = await mailedLeadAtOwnDomain(env);
  dns.txt.set(w.domain, ['v=spf1 -all']);
  dns.txt.set(`_dmarc.${w.domain}`, ['v=DMARC1; p=reject; adkim=r; aspf=r']);
  return { ...w, message: w.fixture('fresh-unsubscribe') };
}

const untouched = { lead: 'contacted', blocked: false, events: [] };
const optedOut = { lead: 'unsubscribed', blocked: true, events: ['opt_out', 'reply'] };

/** Sends over SMTP to our visible address and waits until processing settled the message. */
const deliver = async (env: TestEnv, smtp: InboundSmtp, mailFrom: string, raw: Buffer) => ({
  row: await deliverSmtp(env, smtp.port, { from: mailFrom, to: ourAddress, raw }),
});

describe('our own check of mail received over SMTP', () => {
  it('the listener keeps the client address and HELO name on the row', async ({ env, dns, inbound: smtp }) => {
    const w = await world(env, dns);
    const { row } = await deliver(env, smtp, w.jane, w.message);
    expect(row).toMatchObject({ via: 'smtp', clientIp: '127.0.0.1', mailFrom: w.jane });
    expect(row.helo).toEqual(expect.any(String));
  });

  it('signed by the lead domain, DMARC aligned: "please unsubscribe me" opts the lead out', async ({ env, dns, inbound: smtp }) => {
    const w = await world(env, dns);
    const { row } = await deliver(env, smtp, w.jane, await sign(w.message, publishKey(dns, w.domain)));
    expect(row).toMatchObject({
      status: 'applied',
      accountId: w.accountId,
      kind: 'reply',
      replyKind: 'unsubscribe',
      details: {
        matchedBy: 'sender',
        proof: 'sender-authentication',
        senderAuth: {
          pass: true,
          method: 'dmarc',
          domain: w.domain,
          authservId: 'localhost',
          checks: { dkim: [{ domain: w.domain, result: 'pass', aligned: true }], spf: { result: 'fail' }, dmarc: { result: 'pass' } },
        },
      },
    });
    expect(await w.state()).toEqual(optedOut);
  });

  it('a signature that does not verify (the body changed after signing): applied unverified, nothing opted out', async ({
    env,
    dns,
    inbound: smtp,
  }) => {
    const w = await world(env, dns);
    const signed = await sign(w.message, publishKey(dns, w.domain));
    const tampered = Buffer.from(signed.toString('latin1').replace('Please unsubscribe me', 'Please unsubscribe us'), 'latin1');
    const { row } = await deliver(env, smtp, w.jane, tampered);
    expect(row).toMatchObject({ status: 'applied', replyKind: 'unsubscribe', details: { matchedBy: 'sender', proof: 'none' } });
    const auth = row.details!.senderAuth as {
      pass: boolean;
      reason: string;
      checks: { dkim: { result: string }[]; dmarc: { result: string } };
    };
    expect(auth.pass).toBe(false);
    expect(auth.checks.dkim[0]!.result).not.toBe('pass');
    expect(auth.checks.dmarc.result).toBe('fail');
    expect(await w.state()).toEqual(untouched);
    const [wake] = await rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' });
    expect(wake.data.content).toMatchObject({ verified: false, replyKind: 'unsubscribe', from: w.jane });
  });

  it('validly signed, but by another domain (not aligned): nothing opted out', async ({ env, dns, inbound: smtp }) => {
    const w = await world(env, dns);
    const other = `o${Math.random().toString(36).slice(2, 10)}.test`;
    const { row } = await deliver(env, smtp, w.jane, await sign(w.message, publishKey(dns, other)));
    expect(row).toMatchObject({
      status: 'applied',
      details: {
        proof: 'none',
        senderAuth: { pass: false, checks: { dkim: [{ domain: other, result: 'pass', aligned: false }], dmarc: { result: 'fail' } } },
      },
    });
    expect(await w.state()).toEqual(untouched);
  });

  it('unsigned, SPF passes for the client address with DMARC aligned on SPF: opted out; SPF with no DMARC record: not', async ({
    env,
    dns,
    inbound: smtp,
  }) => {
    const w = await world(env, dns);
    dns.txt.set(w.domain, ['v=spf1 ip4:127.0.0.1 -all']);
    const { row } = await deliver(env, smtp, w.jane, w.message);
    expect(row).toMatchObject({
      details: {
        proof: 'sender-authentication',
        senderAuth: {
          pass: true,
          method: 'dmarc',
          checks: { dkim: [], spf: { domain: w.domain, result: 'pass' }, dmarc: { result: 'pass' } },
        },
      },
    });
    expect(await w.state()).toEqual(optedOut);

    const bare = await world(env, dns);
    dns.txt.set(bare.domain, ['v=spf1 ip4:127.0.0.1 -all']);
    dns.txt.delete(`_dmarc.${bare.domain}`);
    const second = await deliver(env, smtp, bare.jane, bare.message);
    expect(second.row).toMatchObject({
      details: { proof: 'none', senderAuth: { pass: false, checks: { spf: { result: 'pass' }, dmarc: { result: 'none' } } } },
    });
    expect(await bare.state()).toEqual(untouched);
  });

  it('DNS does not answer: not proven, applied as an unverified reply within the DNS deadline', async ({ env, dns, inbound: smtp }) => {
    const w = await world(env, dns);
    const signed = await sign(w.message, publishKey(dns, w.domain));
    dns.silent = true;
    try {
      const asked = dns.queries.length;
      // A DNS that never answers would hold the message in 'received' for good: settled at all means the
      // check's own deadline (INBOUND_AUTH_DNS_TIMEOUT_MS) ended it, with a temporary error.
      const { row } = await deliver(env, smtp, w.jane, signed);
      expect(dns.queries.length).toBeGreaterThan(asked);
      expect(row).toMatchObject({ status: 'applied', replyKind: 'unsubscribe', details: { proof: 'none', senderAuth: { pass: false } } });
      expect((row.details!.senderAuth as { reason: string }).reason).toContain('temperror');
    } finally {
      dns.silent = false;
    }
    expect(await w.state()).toEqual(untouched);
    const [wake] = await rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' });
    expect(wake.data.content).toMatchObject({ verified: false });
  });

  it('a DSN to the bounce address quoting nothing of ours: bounces the lead when signed by its domain, not when unsigned', async ({
    env,
    dns,
    inbound: smtp,
  }) => {
    const dsnOf = (domain: string) => {
      const text = mailFixture('forged-dsn').toString('latin1').replaceAll('acme.test', domain);
      // Delivered straight to us: no provider above, so no Authentication-Results and Received of its own.
      return Buffer.from(text.slice(text.indexOf('Date: ')), 'latin1');
    };
    const signed = await world(env, dns);
    const { row } = await deliver(env, smtp, '', await sign(dsnOf(signed.domain), publishKey(dns, signed.domain)));
    expect(row).toMatchObject({ status: 'applied', kind: 'bounce', details: { matchedBy: 'sender', proof: 'sender-authentication' } });
    expect(await signed.state()).toEqual({ lead: 'bounced', blocked: true, events: ['bounce'] });
    const unsigned = await world(env, dns);
    const second = await deliver(env, smtp, '', dsnOf(unsigned.domain));
    expect(second.row).toMatchObject({ status: 'unplaced', kind: 'bounce', details: { proof: 'none', senderAuth: { pass: false } } });
    expect(await unsigned.state()).toEqual(untouched);
  });

  it('two accounts mailed the sender: nobody can tell which one it answers, refused 550 even when signed, nothing kept', async ({
    env,
    dns,
    inbound: smtp,
  }) => {
    const w = await world(env, dns);
    const { accountId: other } = await env.tenant();
    await buildThread(env.deps.db, other, { to: w.jane });
    const stored = async () => (await rows(env, 'inbound_messages').whereIn('account_id', [w.accountId, other])).length;
    const answer = await smtpSend(smtp.port, { from: w.jane, to: [ourAddress], raw: await sign(w.message, publishKey(dns, w.domain)) });
    expect(answer).toMatchObject({ ok: false });
    expect(answer).toMatchObject({ code: 550, response: expect.stringMatching(/5\.7\.1 this message answers no mail of ours/) });
    expect(await stored()).toBe(0);
    expect(await w.state()).toEqual(untouched);
  });
});
