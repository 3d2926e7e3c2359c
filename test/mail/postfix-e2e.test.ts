import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { simpleParser, type ParsedMail } from 'mailparser';
import { dkimVerify } from 'mailauth/lib/dkim/verify';
import { describe, expect } from 'vitest';
import { upsertLead } from '../../src/leads/leads.service.js';
import { generateDkimKey } from '../../src/mail/dkim.service.js';
import type { TestEnv } from '../helpers/fixture.js';
import {
  BOUNCE_DOMAIN,
  INBOUND_DOMAIN,
  MAILBOX_DOMAIN,
  POSTFIX_HOSTNAME,
  sendingThrough,
  swaks,
  type Postfix,
} from '../helpers/postfix.js';
import { withPostfix } from '../helpers/postfix-fixture.js';
import { ensureOpendkim, opendkimVerify } from '../helpers/opendkim.js';
import { until } from '../helpers/processes.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { emailResults } from '../helpers/email-results.js';

/**
 * The mail loop through a real MTA: Debian's Postfix (test/helpers/postfix.ts, a private instance) is the
 * relay between the service and local mailboxes. The service sends with its SMTP transport into Postfix,
 * which delivers to Maildir mailboxes at MAILBOX_DOMAIN, refuses unknown users there at RCPT, bounces
 * unknown users at BOUNCE_DOMAIN with its own DSN, and relays everything for INBOUND_DOMAIN by a transport
 * map to the service's inbound SMTP listener. What comes back (Postfix's DSN, a reply sent with swaks) takes
 * that road; nothing is handed to the service directly.
 *
 * Each part of the loop is a describe of its own, so each can grow with the sending side it tests.
 */
const ALICE = `alice@${MAILBOX_DOMAIN}`;
const BOB = `bob@${MAILBOX_DOMAIN}`;
const GHOST = `ghost@${BOUNCE_DOMAIN}`;
/** Every send's envelope sender (VERP): bounces+<its thread's token> at the inbound domain. */
const VERP = new RegExp(`^bounces\\+[0-9a-z]+@${INBOUND_DOMAIN.replace('.', '\\.')}$`);

const it = withPostfix({ users: [ALICE, BOB] });
it.override('options', ({ postfix }) => ({
  env: { ...sendingThrough(postfix), AGENT_WAIT_POLL_MS: '100' },
  pools: ['agent-turns', 'shipments', 'inbound-mail'],
}));
// The relay's road back (the service's inbound listener Postfix relays to) is open before the first test.
it.beforeAll(({ relayed: _listening }) => {});

const SCOPES = ['agent:message', 'review:read', 'review:write', 'leads:read', 'results:read'] as const;

/** A test's world: the fixture's env, and an account with a lead. */
interface World {
  env: TestEnv;
  token: string;
  accountId: string;
  leadId: string;
}

/** An account with a lead at `domain` whose contacts are `emails`. */
async function world(env: TestEnv, domain: string, emails: string[]): Promise<World> {
  const { token, accountId } = await env.tenant([...SCOPES]);
  const contacts = emails.map((email) => ({ name: email.split('@')[0]!, email }));
  const { id: leadId } = await upsertLead(env.deps.db, accountId, { domain, contacts });
  return { env, token, accountId, leadId };
}

async function say(w: World, text: string): Promise<void> {
  const { env } = w;
  const res = await env.api().post('/api/v1/agent/messages').set(auth(w.token)).send({ text, waitSeconds: 10 });
  expect(res.status).toBe(200);
  expect(res.body.message.status).toBe('replied');
}

type Card = { id: string; sourceType: string; payload: Record<string, unknown> };

async function waiting(w: World, sourceType: string): Promise<Card[]> {
  const { env } = w;
  const res = await env.api().get('/api/v1/review').set(auth(w.token));
  expect(res.status).toBe(200);
  return (res.body.items as Card[]).filter((c) => c.sourceType === sourceType);
}

/** The agent drafts a mail to `to` about `topic` and a person sends the card: the API's answer. */
async function draftAndSend(w: World, to: string, topic: string) {
  const { env } = w;
  await say(w, `draft an email to ${to} about ${topic}`);
  const card = (await waiting(w, 'mail_draft')).find((c) => c.payload.to === to);
  expect(card).toBeTruthy();
  return env.api().post(`/api/v1/review/${card!.id}/send`).set(auth(w.token)).send({});
}

/** Messages in `address`'s mailbox whose subject has `text`, parsed. */
async function delivered(postfix: Postfix, address: string, text: string): Promise<ParsedMail[]> {
  const all = await Promise.all(postfix.mailbox(address).map((raw) => simpleParser(raw)));
  return all.filter((m) => m.subject?.includes(text));
}

/** Waits for the mail about `text` in `address`'s mailbox, and for Postfix's queue to drain (so a second copy would show). */
async function arrived(postfix: Postfix, address: string, text: string): Promise<ParsedMail[]> {
  await until(async () => (await delivered(postfix, address, text)).length > 0, 15_000, 50);
  await postfix.drained();
  return delivered(postfix, address, text);
}

const header = (m: ParsedMail, key: string) => (m.headerLines.find((h) => h.key === key)?.line ?? '').replace(/\r?\n[ \t]+/g, ' ');
const replyTokenOf = (m: ParsedMail) => /^reply\+([0-9a-z]+)@/.exec(m.replyTo!.value[0]!.address!)![1]!;

const email = (w: World) => emailResults(w.env, w.token);

async function lead(w: World) {
  const { env } = w;
  const res = await env.api().get(`/api/v1/leads/${w.leadId}`).set(auth(w.token));
  expect(res.status).toBe(200);
  return res.body.lead as { status: string; replyKind: string | null };
}

async function contactsOf(w: World) {
  const { env } = w;
  const res = await env.api().get(`/api/v1/leads/${w.leadId}`).set(auth(w.token));
  expect(res.status).toBe(200);
  return res.body.lead.contacts as { email: string; status: string }[];
}

const blocked = async (w: World, address: string) =>
  (await row(w.env, 'blocklist_entries', { account_id: w.accountId, value: address })) ?? null;

/** The latest inbound message once the inbound-mail pool has settled it. */
const settledInbound = (w: World) =>
  until(async () => {
    const last = await rows(w.env, 'inbound_messages', { account_id: w.accountId }).orderBy('received_at', 'desc').first();
    return last && last.status !== 'received' ? last : null;
  }, 15_000);

describe('sending through Postfix', () => {
  it('a sent card reaches the mailbox once, DKIM-signed, with its Message-ID, Reply-To token, one-click List-Unsubscribe', async ({
    env,
    postfix,
  }) => {
    ensureOpendkim();
    // The From domain's key, as an operator makes it; the TXT record it printed is what DNS would publish.
    const key = await generateDkimKey(env.deps.db, env.config.sealing, INBOUND_DOMAIN, 'postfix1');
    const w = await world(env, MAILBOX_DOMAIN, [ALICE]);
    const res = await draftAndSend(w, ALICE, 'a note for the mailbox');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'sent', to: ALICE });

    const [mail, ...more] = await arrived(postfix, ALICE, 'note for the mailbox');
    expect(more).toHaveLength(0);
    // Postfix took it from the service and delivered it itself.
    expect(header(mail!, 'received')).toContain(`by ${POSTFIX_HOSTNAME} (Postfix)`);
    expect(mail!.messageId).toMatch(new RegExp(`@${INBOUND_DOMAIN.replace('.', '\\.')}>$`));
    expect(mail!.replyTo!.value[0]!.address).toMatch(new RegExp(`^reply\\+[0-9a-z]+@${INBOUND_DOMAIN.replace('.', '\\.')}$`));
    expect(header(mail!, 'list-unsubscribe')).toMatch(/<mailto:unsubscribe\+[0-9a-z]+@inbound\.test(\?[^>]*)?>/);
    expect(header(mail!, 'list-unsubscribe')).toMatch(/<https?:\/\/[^>]+\/u\/[0-9a-z]+>/);
    expect(header(mail!, 'list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    // The envelope sender, as the mailbox records it: where Postfix sends a bounce.
    const returnPath = /^Return-Path: <([^>]+)>$/.exec(header(mail!, 'return-path'))?.[1] ?? '';
    expect(returnPath).toMatch(VERP);
    // The same token as the Reply-To's: a bounce names the send by it.
    expect(returnPath.split('+')[1]!.split('@')[0]).toBe(replyTokenOf(mail!));
    expect(await email(w)).toMatchObject({ sent: 1, bounces: 0 });

    // The signature survives Postfix and verifies against the published key, for mailauth and for OpenDKIM.
    const raw = postfix.mailbox(ALICE).find((m) => m.includes('note for the mailbox'))!;
    const resolver = async (name: string, type: string) => {
      if (type !== 'TXT' || name.toLowerCase() !== key.name) throw Object.assign(new Error('no record'), { code: 'ENOTFOUND' });
      return [key.value.match(/.{1,255}/g)!];
    };
    const [signature] = (await dkimVerify(Buffer.from(raw), { resolver })).results;
    expect(signature).toMatchObject({ signingDomain: INBOUND_DOMAIN, selector: 'postfix1', status: { result: 'pass' } });
    expect(signature!.signingHeaders!.keys.toLowerCase()).toMatch(/list-unsubscribe: list-unsubscribe-post/);
    expect(await opendkimVerify(raw, { [key.name]: key.value })).toEqual({ code: 0, output: '' });
  });
});

describe("Postfix's own DSN for an unknown user", () => {
  it('comes back through the transport map to the inbound listener, bounces the lead and blocks the address', async ({ env, postfix }) => {
    const w = await world(env, BOUNCE_DOMAIN, [GHOST]);
    // Postfix accepts the recipient at RCPT; its delivery agent then finds no such user and bounces.
    const res = await draftAndSend(w, GHOST, 'a note nobody reads');
    expect(res.status).toBe(200);

    const found = await settledInbound(w);
    expect(found).toMatchObject({ status: 'applied', kind: 'bounce' });
    // The DSN went to the send's own bounces+ address (VERP): matched by that token.
    expect(found.details).toMatchObject({
      rule: 'dsn-rfc3464',
      matchedBy: 'bounce-address',
      bounce: { type: 'hard', status: '5.1.1', recipient: GHOST },
    });
    await postfix.drained();
    // The DSN went from Postfix's bounce daemon to the listener, by the transport map.
    const verp = VERP.source.slice(1, -1);
    expect(postfix.log()).toMatch(
      new RegExp(`to=<${verp}>, relay=127\\.0\\.0\\.1\\[127\\.0\\.0\\.1\\]:${postfix.inboundPort}.*status=sent`),
    );
    expect(await lead(w)).toMatchObject({ status: 'bounced' });
    expect((await blocked(w, GHOST))?.source).toBe('agent');
    expect(await email(w)).toMatchObject({ sent: 1, bounces: 1 });
    // The relay took the mail and bounced it later: the card says "Bounced", as a refusal at RCPT's does.
    const [card] = await rows(env, 'review_cards', { account_id: w.accountId, source_type: 'mail_draft' }).whereRaw("payload->>'to' = ?", [
      GHOST,
    ]);
    const view = await env.api().get(`/api/v1/review/${card.id}`).set(auth(w.token));
    expect(view.body.item).toMatchObject({ status: 'sent', primaryLabel: 'Bounced', actions: [] });
    // The agent cannot draft to the address any more.
    await say(w, `draft an email to ${GHOST} about anything`);
    expect((await waiting(w, 'mail_draft')).filter((c) => c.payload.to === GHOST)).toEqual([]);
  });
});

describe('a refusal at RCPT', () => {
  it("answers the send with Postfix's 550 5.1.1, delivers nothing, and bounces and blocks the address", async ({ env, postfix }) => {
    const nobody = `nobody@${MAILBOX_DOMAIN}`;
    const w = await world(env, MAILBOX_DOMAIN, [nobody]);
    const res = await draftAndSend(w, nobody, 'a note refused at once');
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('rejected');
    expect(res.body.message).toMatch(/550 5\.1\.1/);
    expect(postfix.log()).toMatch(/NOQUEUE: reject: RCPT from .*550 5\.1\.1 <nobody@mailbox\.test>/);
    expect(postfix.mailbox(nobody)).toEqual([]);
    // A hard bounce like a DSN: blocked with Postfix's text, counted, the lead bounced, the card never sendable again.
    const entry = await blocked(w, nobody);
    expect(entry?.source).toBe('agent');
    expect(entry?.reason).toMatch(/550 5\.1\.1/);
    expect(await email(w)).toMatchObject({ bounces: 1 });
    expect(await lead(w)).toMatchObject({ status: 'bounced' });
    expect((await waiting(w, 'mail_draft')).filter((c) => c.payload.to === nobody)).toEqual([]);
  });
});

/** A reply as Thunderbird writes it, answering `sent`, from `from` to its reply+ address. */
function thunderbirdReply(sent: ParsedMail, from: string): string {
  const to = sent.replyTo!.value[0]!.address!;
  return [
    `Message-ID: <7c1e2f3a-9b8d-4c6e-a1f0-${Date.now()}@${MAILBOX_DOMAIN}>`,
    `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
    'MIME-Version: 1.0',
    'User-Agent: Mozilla Thunderbird',
    `Subject: Re: ${sent.subject}`,
    'Content-Language: en-US',
    `To: Growth Agent <${to}>`,
    `References: ${sent.messageId}`,
    `From: Alice <${from}>`,
    `In-Reply-To: ${sent.messageId}`,
    'Content-Type: text/plain; charset=UTF-8; format=flowed',
    'Content-Transfer-Encoding: 8bit',
    '',
    'Hi,',
    '',
    'Thanks, this sounds interesting. Could we set up a call next Tuesday or ',
    'Wednesday afternoon?',
    '',
    'Alice',
    '',
    `On ${sent.date?.toUTCString()}, Growth Agent wrote:`,
    ...sent
      .text!.trim()
      .split('\n')
      .map((l) => `> ${l}`),
    '',
  ].join('\r\n');
}

describe('a reply through Postfix', () => {
  it('sent with swaks to the reply+ address, it threads under our mail, makes the lead replied and wakes the agent', async ({
    env,
    postfix,
  }) => {
    const w = await world(env, MAILBOX_DOMAIN, [ALICE]);
    expect((await draftAndSend(w, ALICE, 'a question for Alice')).status).toBe(200);
    const [sent] = await arrived(postfix, ALICE, 'question for Alice');
    const file = path.join(postfix.dir, `reply-${replyTokenOf(sent!)}.eml`);
    const replyRaw = thunderbirdReply(sent!, ALICE);
    const replyId = /^Message-ID: (<[^>]+>)/m.exec(replyRaw)![1]!;
    writeFileSync(file, replyRaw);

    // Alice's client hands the reply to Postfix, which relays it to the inbound listener by the transport map.
    const out = swaks(postfix.port, [
      '--ehlo',
      'client.mailbox.test',
      '--from',
      ALICE,
      '--to',
      sent!.replyTo!.value[0]!.address!,
      '--data',
      file,
    ]);
    expect(out.status, out.output).toBe(0);
    const found = await settledInbound(w);
    expect(found.status).toBe('applied');
    expect(found.details).toMatchObject({ matchedBy: 'reply-address' });
    expect(await lead(w)).toMatchObject({ status: 'replied', replyKind: 'interested' });
    expect(await email(w)).toMatchObject({ sent: 1, replies: 1, positiveReplies: 1 });

    // The agent woke and filed its follow-up to Alice, waiting for a person.
    const followUp = await until(async () => (await waiting(w, 'mail_draft')).find((c) => c.payload.to === ALICE), 15_000);
    expect(await rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' })).toHaveLength(1);

    // Sent, the follow-up threads under Alice's reply, not beside it: In-Reply-To her reply, References the chain.
    expect((await env.api().post(`/api/v1/review/${followUp.id}/send`).set(auth(w.token)).send({})).status).toBe(200);
    const [answer] = await arrived(postfix, ALICE, `Re: ${sent!.subject}`);
    expect(answer!.inReplyTo).toBe(replyId);
    expect([answer!.references].flat()).toEqual([sent!.messageId, replyId]);
  });
});

describe("a colleague's removal request through Postfix", () => {
  it("Bob answers mail forwarded from Alice's reply+ address asking to be removed: nobody opted out, a card asks a person", async ({
    env,
    postfix,
  }) => {
    const w = await world(env, MAILBOX_DOMAIN, [ALICE, BOB]);
    expect((await draftAndSend(w, ALICE, 'a note Alice forwards')).status).toBe(200);
    const [sent] = await arrived(postfix, ALICE, 'note Alice forwards');
    const replyTo = sent!.replyTo!.value[0]!.address!;
    const file = path.join(postfix.dir, `remove-${replyTokenOf(sent!)}.eml`);
    writeFileSync(
      file,
      [
        `Message-ID: <remove-${Date.now()}@${MAILBOX_DOMAIN}>`,
        `Date: ${new Date().toUTCString().replace('GMT', '+0000')}`,
        'MIME-Version: 1.0',
        `Subject: Re: Fwd: ${sent!.subject}`,
        `To: Growth Agent <${replyTo}>`,
        `From: Bob <${BOB}>`,
        `In-Reply-To: ${sent!.messageId}`,
        'Content-Type: text/plain; charset=UTF-8',
        '',
        'Please remove me from your list.',
        '',
      ].join('\r\n'),
    );
    const out = swaks(postfix.port, ['--ehlo', 'client.mailbox.test', '--from', BOB, '--to', replyTo, '--data', file]);
    expect(out.status, out.output).toBe(0);
    const found = await settledInbound(w);
    expect(found).toMatchObject({ status: 'applied', reply_kind: 'unsubscribe' });
    expect(found.details).toMatchObject({ matchedBy: 'reply-address', proof: 'token' });
    expect(await blocked(w, ALICE)).toBeNull();
    expect(await blocked(w, BOB)).toBeNull();
    expect((await contactsOf(w)).map((c) => c.status).sort()).toEqual(['contacted', 'new']);
    expect(await email(w)).toMatchObject({ replies: 0, unsubscribes: 0 });
    const [card] = await waiting(w, 'mail_removal_request');
    expect(card?.payload).toMatchObject({ requestedBy: BOB, about: ALICE });
  });
});

describe('one-click unsubscribe', () => {
  it("a POST to one contact's List-Unsubscribe URL, as a mailbox provider sends it, blocks that contact only", async ({ env, postfix }) => {
    const w = await world(env, MAILBOX_DOMAIN, [ALICE, BOB]);
    expect((await draftAndSend(w, BOB, 'an offer for Bob')).status).toBe(200);
    const [toBob] = await arrived(postfix, BOB, 'offer for Bob');
    const url = /<(https?:\/\/[^>]+\/u\/[0-9a-z]+)>/.exec(header(toBob!, 'list-unsubscribe'))![1]!;

    // RFC 8058: the provider POSTs `List-Unsubscribe=One-Click` to the URL, with no cookies and no login.
    const res = await env
      .api()
      .post(new URL(url).pathname)
      .set('User-Agent', 'Mozilla/5.0 (compatible; mailbox-provider one-click)')
      .type('form')
      .send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    expect((await blocked(w, BOB))?.source).toBe('opt_out_reply');
    // Only Bob's contact is unsubscribed; the company's lead still counts Alice as reachable.
    const contacts = await contactsOf(w);
    expect(contacts.find((c) => c.email === BOB)?.status).toBe('unsubscribed');
    expect(contacts.find((c) => c.email === ALICE)?.status).not.toBe('unsubscribed');
    expect(await blocked(w, ALICE)).toBeNull();
    expect(await email(w)).toMatchObject({ unsubscribes: 1 });

    // Alice, at the same company, can still be mailed, and it still reaches her.
    expect((await draftAndSend(w, ALICE, 'an offer for Alice')).status).toBe(200);
    expect(await arrived(postfix, ALICE, 'offer for Alice')).toHaveLength(1);
  });
});
