import { describe, expect } from 'vitest';
import type { InboundMessage } from '../../src/inbound/inbound.repository.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { bounceAddress } from '../../src/inbound/smtp-recipients.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { deliverSmtp, mailedLeadAtOwnDomain, senderCheckEnv } from '../helpers/inbound-mail.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { until } from '../helpers/processes.js';
import { rows } from '../helpers/rows.js';

// A reply nothing proves (matched by its sender address alone, no token, thread header or sender
// authentication: src/inbound/proof.ts) still wakes the agent, whose follow-up waits as a card; that card
// says the sender is unverified (payload `senderVerified: false` and a note), whichever brain drafted it.
// A reply to our reply address (proof: the token) makes a card without the marker. Over our SMTP listener,
// with the inbound-mail and agent-turns pools running (the offline brain drafts the follow-up).

it.override('options', ({ dns }) => ({
  env: { ...senderCheckEnv(dns), AGENT_WAIT_POLL_MS: '100' },
  pools: ['inbound-mail', 'agent-turns'],
}));

const world = (env: TestEnv) => mailedLeadAtOwnDomain(env);

/** Jane's "sounds interesting" reply (Gmail's shape) at her world's domain. */
const interested = (w: Awaited<ReturnType<typeof world>>, withOurHeaders: boolean) => {
  let text = mailFixture('gmail-reply', w.thread).toString('latin1').replaceAll('acme.test', w.domain);
  if (!withOurHeaders)
    text = text.replace(/^(References|In-Reply-To): .*\r\n/gim, '').replaceAll(`reply+${w.thread.replyToken}@localhost`, 'agent@localhost');
  return Buffer.from(text, 'latin1');
};

const deliver = (env: TestEnv, smtp: InboundSmtp, to: string, raw: Buffer, from: string): Promise<InboundMessage> =>
  deliverSmtp(env, smtp.port, { from, to, raw });

const draftTo = (env: TestEnv, accountId: string, to: string) =>
  until(async () => {
    const cards = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
    return cards.find((c: { payload: { to?: string } }) => c.payload.to === to) ?? null;
  }, 20_000);

describe('the card answering a reply', () => {
  it('an unproven reply: the follow-up card says the sender is unverified', async ({ env, inbound: smtp }) => {
    const w = await world(env);
    const row = await deliver(env, smtp, bounceAddress(env.deps.config)!, interested(w, false), w.jane);
    expect(row).toMatchObject({ status: 'applied', replyKind: 'interested', details: { matchedBy: 'sender', proof: 'none' } });
    const card = await draftTo(env, w.accountId, w.jane);
    expect(card.payload).toMatchObject({ senderVerified: false, senderNote: expect.stringMatching(/^Unverified sender: .*jane@/) });
  });

  it('a reply to our reply address: the follow-up card carries no marker', async ({ env, inbound: smtp }) => {
    const w = await world(env);
    const row = await deliver(env, smtp, `reply+${w.thread.replyToken}@localhost`, interested(w, true), w.jane);
    expect(row).toMatchObject({ status: 'applied', replyKind: 'interested', details: { proof: 'token' } });
    const card = await draftTo(env, w.accountId, w.jane);
    expect(card.payload.senderVerified).toBeUndefined();
    expect(card.payload.senderNote).toBeUndefined();
  });
});
