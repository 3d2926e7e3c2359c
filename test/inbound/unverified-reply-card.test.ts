import { afterAll, describe, expect } from 'vitest';
import { inboundRepository, type InboundMessage } from '../../src/inbound/inbound.repository.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { bounceAddress } from '../../src/inbound/smtp-recipients.js';
import { startDnsStandIn } from '../helpers/dns-server.js';
import { buildLead, buildThread } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { until, waitFor } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { rows } from '../helpers/rows.js';

// A reply nothing proves (matched by its sender address alone, no token, thread header or sender
// authentication: src/inbound/proof.ts) still wakes the agent, whose follow-up waits as a card; that card
// says the sender is unverified (payload `senderVerified: false` and a note), whichever brain drafted it.
// A reply to our reply address (proof: the token) makes a card without the marker. Over our SMTP listener,
// with the inbound-mail and agent-turns pools running (the offline brain drafts the follow-up).

const dns = await startDnsStandIn();
let env: TestEnv;
let smtp: InboundSmtp;
it.override('options', {
  env: { INBOUND_AUTH_DNS_SERVERS: dns.address, INBOUND_AUTH_DNS_TIMEOUT_MS: '1500', AGENT_WAIT_POLL_MS: '100' },
  pools: ['inbound-mail', 'agent-turns'],
});
it.beforeAll(async ({ env: e }) => {
  env = e;
  smtp = await startInboundSmtp(env.deps, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await smtp?.close();
  await dns.close();
});

const rand = () => Math.random().toString(36).slice(2, 10);

async function world() {
  const domain = `d${rand()}.test`;
  const jane = `jane@${domain}`;
  const { accountId } = await env.tenant();
  const lead = await buildLead(env.deps.db, accountId, { domain, status: 'contacted', contacts: [{ email: jane }] });
  const thread = await buildThread(env.deps.db, accountId, { leadId: lead.id, to: jane });
  return { accountId, domain, jane, thread };
}

/** Jane's "sounds interesting" reply (Gmail's shape) at her world's domain. */
const interested = (w: Awaited<ReturnType<typeof world>>, withOurHeaders: boolean) => {
  let text = mailFixture('gmail-reply', w.thread).toString('latin1').replaceAll('acme.test', w.domain);
  if (!withOurHeaders)
    text = text.replace(/^(References|In-Reply-To): .*\r\n/gim, '').replaceAll(`reply+${w.thread.replyToken}@localhost`, 'agent@localhost');
  return Buffer.from(text, 'latin1');
};

async function deliver(to: string, raw: Buffer, from: string): Promise<InboundMessage> {
  const answer = await smtpSend(smtp.port, { from, to: [to], raw });
  expect(answer, answer.response).toMatchObject({ ok: true });
  const id = /queued as (\S+)/.exec(answer.response)![1]!;
  let row: InboundMessage | null = null;
  await waitFor(async () => {
    row = await inboundRepository(env.deps.db).find(id);
    return row !== null && row.status !== 'received';
  }, `inbound ${id} settled`);
  return row!;
}

const draftTo = (accountId: string, to: string) =>
  until(async () => {
    const cards = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
    return cards.find((c: { payload: { to?: string } }) => c.payload.to === to) ?? null;
  }, 20_000);

describe('the card answering a reply', () => {
  it('an unproven reply: the follow-up card says the sender is unverified', async () => {
    const w = await world();
    const row = await deliver(bounceAddress(env.deps.config)!, interested(w, false), w.jane);
    expect(row).toMatchObject({ status: 'applied', replyKind: 'interested', details: { matchedBy: 'sender', proof: 'none' } });
    const card = await draftTo(w.accountId, w.jane);
    expect(card.payload).toMatchObject({ senderVerified: false, senderNote: expect.stringMatching(/^Unverified sender: .*jane@/) });
  });

  it('a reply to our reply address: the follow-up card carries no marker', async () => {
    const w = await world();
    const row = await deliver(`reply+${w.thread.replyToken}@localhost`, interested(w, true), w.jane);
    expect(row).toMatchObject({ status: 'applied', replyKind: 'interested', details: { proof: 'token' } });
    const card = await draftTo(w.accountId, w.jane);
    expect(card.payload.senderVerified).toBeUndefined();
    expect(card.payload.senderNote).toBeUndefined();
  });
});
