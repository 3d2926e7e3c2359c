import { describe, expect } from 'vitest';
import type { InboundMessage } from '../../src/inbound/inbound.repository.js';
import { UNPROVEN } from '../../src/inbound/process.service.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import { adminCall } from '../helpers/env.js';
import { buildMailedLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { activeSequence, outcomeState, settledInbound } from '../helpers/inbound-mail.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { rows } from '../helpers/rows.js';

// Mail that does not prove it answers ours never opts a lead out, bounces it, stops its sequence or
// blocks its address, whatever its From says: through the account's inbound URL and over SMTP, processed
// by the inbound-mail pool. Our token, one of our Message-IDs, or the receiving provider's passing
// Authentication-Results (its authserv-id trusted) still does.

const PROVIDER = 'mx.inbound.test';
it.override('options', { env: { INBOUND_TRUSTED_AUTHSERV_IDS: PROVIDER }, pools: ['inbound-mail'] });

/** A mailed lead (jane@acme.test) with an active sequence, and the account's inbound URL path. */
async function world(env: TestEnv) {
  const { accountId, leadId, thread } = await buildMailedLead(env.deps.db, (await env.tenant()).accountId);
  const seqId = await activeSequence(env, accountId, leadId, 'jane@acme.test');
  const { out, error } = await adminCall(env, ['mail', 'inbound-url', '--account', accountId]);
  expect(error).toBeUndefined();
  const path = new URL(String(out!.url)).pathname;
  /** What the lead's mail outcome changed: its status, the block list, its sequence, the email counts. */
  const state = () => outcomeState(env, { accountId, leadId, address: 'jane@acme.test', seqId });
  return { accountId, leadId, thread, path, state };
}

const untouched = { lead: 'contacted', blocked: false, sequence: 'active', events: [] };

const settled = (env: TestEnv, id: string): Promise<InboundMessage> => settledInbound(env, id);

async function viaUrl(env: TestEnv, path: string, raw: Buffer): Promise<InboundMessage> {
  const res = await env.api().post(path).set('Content-Type', 'message/rfc822').send(raw);
  expect(res.status).toBe(202);
  return settled(env, res.body.id as string);
}

const edit = (raw: Buffer, f: (s: string) => string) => Buffer.from(f(raw.toString('latin1')), 'latin1');
/** The provider's own verdict (the top field, above its Received) replaced. */
const providerSays = (raw: Buffer, verdict: string) =>
  edit(raw, (s) =>
    s.replace(/^Authentication-Results: [\s\S]*?\r\n(?=Received:)/, `Authentication-Results: ${PROVIDER};\r\n\t${verdict}\r\n`),
  );
const PASS_ACME = 'dkim=pass header.i=@acme.test header.s=s2026 header.b=Xq3vB9k1;\r\n\tdmarc=pass (p=REJECT) header.from=acme.test';
const withHeader = (raw: Buffer, line: string) => edit(raw, (s) => s.replace(/\r\nDate: /, `\r\n${line}\r\nDate: `));
const toToken = (raw: Buffer, t: { replyToken: string }) =>
  edit(raw, (s) => s.replace('To: sam@growthco.example', `To: Sam Lee <reply+${t.replyToken}@localhost>`));

describe('through the inbound URL', () => {
  it('a forged "Please remove me" with no token or thread header: shown to a person, nothing opted out or stopped', async ({ env }) => {
    const w = await world(env);
    const row = await viaUrl(env, w.path, mailFixture('forged-unsubscribe'));
    expect(row).toMatchObject({
      status: 'applied',
      kind: 'reply',
      replyKind: 'unsubscribe',
      sendId: w.thread.sendId,
      details: {
        matchedBy: 'sender',
        proof: 'none',
        // The provider failed it; the passing header the sender wrote below the provider's Received is not read.
        senderAuth: { pass: false, reason: 'the provider failed DMARC for the message' },
      },
    });
    expect(await w.state()).toEqual(untouched);
    const [wake] = await rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' });
    expect(wake.data.content).toMatchObject({ verified: false, replyKind: 'unsubscribe', from: 'jane@acme.test' });
    expect(wake.text).toContain('Unverified');
  });

  it('the same with our Message-ID in In-Reply-To, our reply address, or the provider passing acme.test: opted out', async ({ env }) => {
    const forged = mailFixture('forged-unsubscribe');
    for (const [proof, make] of [
      ['message-id', (t: Thread & { replyToken: string }) => withHeader(forged, `In-Reply-To: ${t.messageId}`)],
      ['token', (t: Thread & { replyToken: string }) => toToken(forged, t)],
      ['sender-authentication', () => providerSays(forged, PASS_ACME)],
    ] as const) {
      const w = await world(env);
      const row = await viaUrl(env, w.path, make(w.thread));
      expect(row, proof).toMatchObject({ status: 'applied', replyKind: 'unsubscribe', details: { proof } });
      expect(await w.state(), proof).toEqual({ lead: 'unsubscribed', blocked: true, sequence: 'stopped', events: ['opt_out', 'reply'] });
    }
  });

  it("a forged pass right below the provider's own DMARC fail (same id, adjacent): only the topmost counts", async ({ env }) => {
    const w = await world(env);
    // The sender's passing field moved up, right under the provider's failing one: no Received between them.
    const adjacent = edit(mailFixture('forged-unsubscribe'), (s) => {
      const forged = /\r\nAuthentication-Results: mx\.inbound\.test; dkim=pass[^\r]*/.exec(s)![0];
      return s.replace(forged, '').replace(/\r\nReceived: /, `${forged}\r\nReceived: `);
    });
    expect(adjacent.toString('latin1')).toMatch(
      /dmarc=fail \(p=NONE sp=NONE dis=NONE\) header\.from=acme\.test\r\nAuthentication-Results: /,
    );
    const row = await viaUrl(env, w.path, adjacent);
    expect(row).toMatchObject({
      status: 'applied',
      replyKind: 'unsubscribe',
      details: { matchedBy: 'sender', proof: 'none', senderAuth: { pass: false, reason: 'the provider failed DMARC for the message' } },
    });
    expect(await w.state()).toEqual(untouched);
  });

  it('a forged MAILER-DAEMON report naming 550 5.1.1 <jane@…>: kept aside, nobody bounced or blocked', async ({ env }) => {
    const w = await world(env);
    const row = await viaUrl(env, w.path, mailFixture('forged-dsn'));
    expect(row).toMatchObject({ status: 'unplaced', reason: UNPROVEN, kind: 'bounce', details: { matchedBy: 'sender', proof: 'none' } });
    expect(await w.state()).toEqual(untouched);
    // Signed and passed, but by another domain than the failed recipient's: still nobody.
    const evil = providerSays(
      edit(mailFixture('forged-dsn'), (s) => s.replace('From: MAILER-DAEMON@acme.test', 'From: MAILER-DAEMON@evil.test')),
      'dkim=pass header.d=evil.test;\r\n\tdmarc=pass header.from=evil.test',
    );
    expect(await viaUrl(env, w.path, evil)).toMatchObject({
      status: 'unplaced',
      reason: UNPROVEN,
      details: { senderAuth: { pass: true, domain: 'evil.test' }, proof: 'none' },
    });
    expect(await w.state()).toEqual(untouched);
    expect(await rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' })).toEqual([]);
  });

  it('the same report with our original Message-ID, or passed by the provider for acme.test: jane bounced', async ({ env }) => {
    const dsn = mailFixture('forged-dsn');
    for (const [proof, make] of [
      [
        'message-id',
        (t: Thread & { replyToken: string }) => edit(dsn, (s) => s.replace('<4d1f0c9e-made-up@growthco.example>', t.messageId)),
      ],
      ['sender-authentication', () => providerSays(dsn, PASS_ACME)],
    ] as const) {
      const w = await world(env);
      expect(await viaUrl(env, w.path, make(w.thread)), proof).toMatchObject({ status: 'applied', kind: 'bounce', details: { proof } });
      expect(await w.state(), proof).toEqual({ lead: 'bounced', blocked: true, sequence: 'stopped', events: ['bounce'] });
    }
  });
});

describe('over SMTP', () => {
  const send = async (smtp: InboundSmtp, to: string, raw: Buffer) => smtpSend(smtp.port, { from: 'jane@acme.test', to: [to], raw });
  const idOf = (response: string) => /queued as (\S+)/.exec(response)?.[1] ?? null;

  it('forged mail to a non-token address changes nothing (refused at RCPT, nothing stored)', async ({ env, inbound: smtp }) => {
    const w = await world(env);
    for (const raw of [mailFixture('forged-unsubscribe'), mailFixture('forged-dsn')]) {
      expect(await send(smtp, 'sam@localhost', raw)).toMatchObject({ ok: false, code: 550 });
    }
    expect(await w.state()).toEqual(untouched);
  });

  it('the same mail to our reply address still opts out; a report sent there bounces nothing (not a bounce address)', async ({
    env,
    inbound: smtp,
  }) => {
    const a = await world(env);
    const unsub = await send(smtp, `reply+${a.thread.replyToken}@localhost`, toToken(mailFixture('forged-unsubscribe'), a.thread));
    expect(unsub.ok).toBe(true);
    expect(await settled(env, idOf(unsub.response)!)).toMatchObject({ status: 'applied', details: { proof: 'token' } });
    expect(await a.state()).toMatchObject({ lead: 'unsubscribed', blocked: true, sequence: 'stopped' });
    const b = await world(env);
    const dsn = await send(smtp, `reply+${b.thread.replyToken}@localhost`, mailFixture('forged-dsn'));
    expect(dsn.ok).toBe(true);
    expect(await settled(env, idOf(dsn.response)!)).toMatchObject({ status: 'unplaced', kind: 'bounce' });
    expect(await b.state()).toEqual(untouched);
    const c = await world(env);
    const verp = await send(smtp, `bounces+${c.thread.replyToken}@localhost`, mailFixture('forged-dsn'));
    expect(verp.ok).toBe(true);
    expect(await settled(env, idOf(verp.response)!)).toMatchObject({ status: 'applied', kind: 'bounce', details: { proof: 'token' } });
    expect(await c.state()).toMatchObject({ lead: 'bounced', blocked: true, sequence: 'stopped' });
  });
});
