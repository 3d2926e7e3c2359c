import { describe, expect } from 'vitest';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import type { InboundMessage } from '../../src/inbound/inbound.repository.js';
import { REMOVAL_REQUEST_SOURCE } from '../../src/inbound/removal-request.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { bounceAddress } from '../../src/inbound/smtp-recipients.js';
import { getLead } from '../../src/leads/leads.service.js';
import { buildThread } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { deliverSmtp, mailedLeadAtOwnDomain, senderCheckEnv } from '../helpers/inbound-mail.js';
import { auth } from '../helpers/auth.js';
import { cardRow, rows } from '../helpers/rows.js';

// What mail received over our own SMTP listener may change, over a real socket (this test is the client,
// on 127.0.0.1), processed by the inbound-mail pool. Over SMTP we are the receiving server, so an
// Authentication-Results field in the message is the sender's own words, whatever authserv-id it names:
// only our own DKIM/SPF/DMARC check counts (the DNS stand-in publishes nothing, so it proves nothing here).
// A delivery report counts only at a bounce address and for its send's recipient; a removal request
// written by someone else than the recipient opts nobody out and asks a person.

const TRUSTED = 'mx.trusted.test';
let bare: string;
it.override('options', ({ dns }) => ({
  env: { INBOUND_TRUSTED_AUTHSERV_IDS: TRUSTED, ...senderCheckEnv(dns) },
  pools: ['inbound-mail'],
}));
it.beforeAll(({ env }) => {
  bare = bounceAddress(env.deps.config)!;
});

const rand = () => Math.random().toString(36).slice(2, 10);

/** A lead at a domain of its own with contact jane, mailed once (its card sent), with an active sequence to her. */
const world = (env: TestEnv) => mailedLeadAtOwnDomain(env, { sequence: true, sentCard: true });

const untouched = { lead: 'contacted', blocked: false, sequence: 'active', events: [] };

/** A forged verdict of the trusted provider, on top of the message. */
const forgedPass = (raw: Buffer, domain: string) =>
  Buffer.concat([
    Buffer.from(`Authentication-Results: ${TRUSTED};\r\n\tdkim=pass header.d=${domain};\r\n\tdmarc=pass header.from=${domain}\r\n`),
    raw,
  ]);

/** A forged report delivered straight to us: the fixture without the provider's fields on top. */
const bareDsn = (raw: Buffer) => {
  const text = raw.toString('latin1');
  return Buffer.from(text.slice(text.indexOf('Date: ')), 'latin1');
};

const deliver = (env: TestEnv, smtp: InboundSmtp, to: string, raw: Buffer, from = ''): Promise<InboundMessage> =>
  deliverSmtp(env, smtp.port, { from, to, raw });

const cardOf = async (env: TestEnv, w: { token: string }, id: string) => {
  const res = await env.api().get(`/api/v1/review/${id}`).set(auth(w.token));
  expect(res.status).toBe(200);
  return res.body.item as { status: string; primaryLabel: string; actions: string[]; payload: Record<string, unknown> };
};

describe('a forged Authentication-Results over SMTP', () => {
  it('to the bare bounce address: a "please unsubscribe me" opts nobody out, a report bounces nobody, a reply stops nothing', async ({
    env,
    inbound: smtp,
  }) => {
    const w = await world(env);
    const unsub = await deliver(env, smtp, bare, forgedPass(w.fixture('fresh-unsubscribe'), w.domain), w.jane);
    expect(unsub).toMatchObject({ status: 'applied', replyKind: 'unsubscribe', details: { matchedBy: 'sender', proof: 'none' } });
    // Our own check decided (authserv-id ours), not the field the sender wrote.
    expect(unsub.details!.senderAuth).toMatchObject({ pass: false, checks: expect.any(Object) });
    expect(await w.state()).toEqual(untouched);

    const dsn = await deliver(env, smtp, bare, forgedPass(bareDsn(w.fixture('forged-dsn')), w.domain));
    expect(dsn).toMatchObject({ status: 'unplaced', kind: 'bounce', details: { proof: 'none', senderAuth: { pass: false } } });
    expect(await w.state()).toEqual(untouched);

    const reply = Buffer.from(
      w
        .fixture('fresh-unsubscribe')
        .toString('latin1')
        .replace('Subject: Unsubscribe', 'Subject: Re: your note')
        .replace(/^Message-ID: .*$/im, `Message-ID: <${rand()}@${w.domain}>`)
        .replace(/Hi,[\s\S]*$/, 'Hi,\r\n\r\nThanks, this sounds interesting. Could we set up a call next week?\r\n\r\nJane\r\n'),
      'latin1',
    );
    const answered = await deliver(env, smtp, bare, forgedPass(reply, w.domain), w.jane);
    expect(answered).toMatchObject({ status: 'applied', replyKind: 'interested', details: { proof: 'none' } });
    expect(await w.state()).toEqual(untouched);
  });

  it('to a token address of another send: nothing changes for the lead the report or request names', async ({ env, inbound: smtp }) => {
    const w = await world(env);
    // Mallory holds a token of the same account (mail we sent her), and names jane.
    const mallory = await buildThread(env.deps.db, w.accountId, { to: `mallory@e${rand()}.test` });
    for (const to of [`reply+${mallory.replyToken}@localhost`, `bounces+${mallory.replyToken}@localhost`]) {
      const row = await deliver(env, smtp, to, forgedPass(bareDsn(w.fixture('forged-dsn')), w.domain));
      expect(row, to).toMatchObject({ status: 'unplaced', kind: 'bounce' });
    }
    const unsub = await deliver(
      env,
      smtp,
      `reply+${mallory.replyToken}@localhost`,
      forgedPass(w.fixture('fresh-unsubscribe'), w.domain),
      w.jane,
    );
    expect(unsub).toMatchObject({ status: 'applied', replyKind: 'unsubscribe', details: { proof: 'token' } });
    expect(await w.state()).toEqual(untouched);
    expect(await isBlocked(env.deps.db, w.accountId, mallory.to)).toBe(false);
  });
});

describe('a delivery report counts only at a bounce address, for its own recipient', () => {
  it("at the send's reply+ address: bounces nothing, even naming the send's own recipient", async ({ env, inbound: smtp }) => {
    const w = await world(env);
    const row = await deliver(env, smtp, `reply+${w.thread.replyToken}@localhost`, bareDsn(w.fixture('forged-dsn')));
    expect(row).toMatchObject({ status: 'unplaced', kind: 'bounce', reason: expect.stringMatching(/not a bounce address/) });
    expect(await w.state()).toEqual(untouched);
  });

  it("at the send's bounces+ address naming another recipient: bounces nobody; naming its own: bounced, its card says so", async ({
    env,
    inbound: smtp,
  }) => {
    const w = await world(env);
    const other = Buffer.from(w.fixture('postfix-dsn-verp').toString('latin1').replaceAll(w.jane, `john@${w.domain}`), 'latin1');
    const refused = await deliver(env, smtp, `bounces+${w.thread.replyToken}@localhost`, other);
    expect(refused).toMatchObject({ status: 'unplaced', kind: 'bounce' });
    expect(await w.state()).toEqual(untouched);
    expect(await isBlocked(env.deps.db, w.accountId, `john@${w.domain}`)).toBe(false);

    // The relay took the mail, then its DSN came back to the send's envelope sender (VERP), as Postfix writes it.
    const own = await deliver(env, smtp, `bounces+${w.thread.replyToken}@localhost`, w.fixture('postfix-dsn-verp'));
    expect(own).toMatchObject({ status: 'applied', kind: 'bounce', details: { matchedBy: 'bounce-address', bounce: { type: 'hard' } } });
    expect(await w.state()).toEqual({ lead: 'bounced', blocked: true, sequence: 'stopped', events: ['bounce'] });
    // As a refusal at RCPT: the card reads "Bounced", no verb left; it stays `sent` (the mail did leave).
    const card = await cardOf(env, w, w.card!.id);
    expect(card).toMatchObject({ status: 'sent', primaryLabel: 'Bounced', actions: [] });
    const row = await cardRow(env, w.card!.id);
    expect(row.resolution).toMatchObject({ bounced: true, bounce: expect.stringMatching(/^hard bounce: 5\.1\.1/) });
  });
});

describe('a removal request written by someone else than the recipient', () => {
  it("a colleague's \"remove me\" to jane's reply+ address: nobody opted out, not jane's reply, a card asks a person", async ({
    env,
    inbound: smtp,
  }) => {
    const w = await world(env);
    const colleague = `sam.colleague@${w.domain}`;
    const raw = Buffer.from(
      w
        .fixture('unsubscribe-reply')
        .toString('latin1')
        .replace(/^From: .*$/m, `From: Sam Colleague <${colleague}>`)
        .replace(/^Message-ID: .*$/im, `Message-ID: <${rand()}@${w.domain}>`),
      'latin1',
    );
    const row = await deliver(env, smtp, `reply+${w.thread.replyToken}@localhost`, raw, colleague);
    expect(row).toMatchObject({ status: 'applied', replyKind: 'unsubscribe', details: { proof: 'token' } });
    expect(await w.state()).toEqual(untouched);
    expect(await w.state(colleague)).toEqual(untouched);
    const lead = await getLead(env.deps.db, w.accountId, w.leadId);
    expect(lead.replyKind).toBeNull();
    const cards = await rows(env, 'review_cards', { account_id: w.accountId, source_type: REMOVAL_REQUEST_SOURCE });
    expect(cards).toHaveLength(1);
    const card = await cardOf(env, w, cards[0].id);
    expect(card).toMatchObject({
      status: 'pending',
      actions: expect.arrayContaining(['answer', 'dismiss']),
      payload: { requestedBy: colleague, about: w.jane, sendId: w.thread.sendId },
    });
    expect(cards[0].title).toContain(colleague);
    expect(cards[0].title).toContain(w.jane);

    // Jane's own request through the same address still opts her out, with no card.
    const own = await deliver(env, smtp, `reply+${w.thread.replyToken}@localhost`, w.fixture('unsubscribe-reply'), w.jane);
    expect(own).toMatchObject({ status: 'applied', replyKind: 'unsubscribe' });
    expect(await w.state()).toMatchObject({ lead: 'unsubscribed', blocked: true, sequence: 'stopped' });
    expect(await rows(env, 'review_cards', { account_id: w.accountId, source_type: REMOVAL_REQUEST_SOURCE })).toHaveLength(1);
  });
});

describe('a later, weaker reply', () => {
  it('"interested" then a bare "thanks": the lead and the contact keep "interested"', async ({ env, inbound: smtp }) => {
    const w = await world(env);
    const first = await deliver(env, smtp, `reply+${w.thread.replyToken}@localhost`, w.fixture('gmail-reply'), w.jane);
    expect(first).toMatchObject({ status: 'applied', replyKind: 'interested' });
    const thanks = Buffer.from(
      [
        `From: Jane Doe <${w.jane}>`,
        `To: reply+${w.thread.replyToken}@localhost`,
        'Subject: Re: Quick idea',
        `Message-ID: <${rand()}@${w.domain}>`,
        `In-Reply-To: ${w.thread.messageId}`,
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        '',
        'Thanks.',
        '',
      ].join('\r\n'),
    );
    const second = await deliver(env, smtp, `reply+${w.thread.replyToken}@localhost`, thanks, w.jane);
    expect(second).toMatchObject({ status: 'applied', replyKind: 'other' });
    const lead = await getLead(env.deps.db, w.accountId, w.leadId);
    expect(lead).toMatchObject({ status: 'replied', replyKind: 'interested' });
    expect(lead.contacts.find((c) => c.email === w.jane)).toMatchObject({ status: 'replied', replyKind: 'interested' });
  });
});
