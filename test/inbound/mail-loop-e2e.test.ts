import { simpleParser, type ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { mailLoopOptions, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows, sequenceOfCard } from '../helpers/rows.js';
import { emailResults } from '../helpers/email-results.js';

/**
 * The mail loop end to end, with nothing called directly: the agent drafts (offline brain, through
 * POST /agent/messages), a person sends or approves through the API, the mail reaches a real SMTP
 * server, and what comes back (a reply as Gmail writes it, a Postfix DSN, an Outlook out-of-office, a
 * "please unsubscribe me" reply) is sent over SMTP to the service's own inbound listener; the
 * inbound-mail pool parses and applies it. The one-click unsubscribe is a POST to the mail's own URL.
 */
it.override('options', ({ smtp }) => mailLoopOptions(smtp));

const JANE = 'jane@acme.test';
const SCOPES = ['agent:message', 'review:read', 'review:write', 'leads:read', 'results:read'] as const;

/** A test's world: the fixture's env and stand-ins, and the account Jane is a lead of. */
interface World {
  env: TestEnv;
  smtp: TestSmtp;
  inbound: InboundSmtp;
  token: string;
  accountId: string;
  leadId: string;
}

async function world({ env, smtp, inbound }: Pick<World, 'env' | 'smtp' | 'inbound'>): Promise<World> {
  const { token, accountId } = await env.tenant([...SCOPES]);
  const { id: leadId } = await upsertLead(env.deps.db, accountId, { domain: 'acme.test', contacts: [{ name: 'Jane Doe', email: JANE }] });
  return { env, smtp, inbound, token, accountId, leadId };
}

/** Tells the agent something and waits for its answer. */
async function say(w: World, text: string): Promise<void> {
  const { env } = w;
  const res = await env.api().post('/api/v1/agent/messages').set(auth(w.token)).send({ text, waitSeconds: 10 });
  expect(res.status).toBe(200);
  expect(res.body.message.status).toBe('replied');
}

async function waiting(w: World, sourceType: string) {
  const { env } = w;
  const res = await env.api().get('/api/v1/review').set(auth(w.token));
  expect(res.status).toBe(200);
  return (res.body.items as { id: string; sourceType: string; payload: Record<string, unknown> }[]).filter(
    (c) => c.sourceType === sourceType,
  );
}

/** The agent drafts a mail to Jane, a person sends it, and it arrives: the message as the SMTP server got it. */
async function draftAndSend(w: World, topic: string): Promise<ParsedMail> {
  const { env, smtp } = w;
  await say(w, `draft an email to ${JANE} about ${topic}`);
  const [card] = await waiting(w, 'mail_draft');
  const res = await env.api().post(`/api/v1/review/${card!.id}/send`).set(auth(w.token)).send({});
  expect(res.status).toBe(200);
  const got = smtp.received.filter((m) => m.raw.includes(`Subject: ${topic.charAt(0).toUpperCase()}${topic.slice(1)}`)).at(-1)!;
  expect(got).toBeTruthy();
  return simpleParser(got.raw);
}

/** What the recipient's side sends back: a fixture with this mail's reply token and Message-ID, over SMTP to the inbound port. */
async function comesBack({ env, inbound }: World, sent: ParsedMail, fixture: string, rcpt?: string): Promise<string> {
  const replyTo = sent.replyTo!.value[0]!.address!;
  const replyToken = /^reply\+([0-9a-z]+)@/.exec(replyTo)![1]!;
  const raw = mailFixture(fixture, { replyToken, messageId: sent.messageId! });
  // A report goes to the send's envelope sender (its bounces+ address, VERP); a reply to its Reply-To.
  const dsn = fixture.includes('dsn');
  const to = rcpt ?? (dsn ? replyTo.replace(/^reply\+/, 'bounces+') : replyTo);
  const answer = await smtpSend(inbound.port, { from: dsn ? '' : JANE, to: [to], raw });
  expect(answer.code).toBe(250);
  const found = await until(async () => {
    const r = await rows(env, 'inbound_messages').orderBy('received_at', 'desc').first();
    return r && r.status !== 'received' ? r : null;
  }, 15_000);
  return found.status as string;
}

async function lead(w: World) {
  const { env } = w;
  const res = await env.api().get(`/api/v1/leads/${w.leadId}`).set(auth(w.token));
  expect(res.status).toBe(200);
  return res.body.lead as { status: string; replyKind: string | null; declineReason: string | null };
}

const email = (w: World) => emailResults(w.env, w.token);

/** A header line as the mail carried it (unfolded). */
const header = (m: ParsedMail, key: string) => (m.headerLines.find((h) => h.key === key)?.line ?? '').replace(/\r?\n[ \t]+/g, ' ');

const blockSource = async (w: World) => (await row(w.env, 'blocklist_entries', { account_id: w.accountId, value: JANE }))?.source ?? null;
const wakes = (w: World) => rows(w.env, 'agent_turns', { account_id: w.accountId, kind: 'wake' });

describe('the mail loop, end to end', () => {
  it('a reply makes the lead replied (interested), shows in /results, stops its sequence, wakes the agent to follow up', async ({
    env,
    smtp,
    inbound,
  }) => {
    const w = await world({ env, smtp, inbound });
    // A sequence to Jane is running (its first mail went out on approval).
    await say(w, `start a sequence to ${JANE} about onboarding`);
    const [seqCard] = await waiting(w, 'sequence');
    expect((await env.api().post(`/api/v1/review/${seqCard!.id}/answer`).set(auth(w.token)).send({ action: 'approve' })).status).toBe(200);
    expect((await sequenceOfCard(env, seqCard!.id)).status).toBe('active');

    const sent = await draftAndSend(w, 'a quick idea for Acme');
    expect(header(sent, 'list-unsubscribe-post')).toBe('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    expect(await lead(w)).toMatchObject({ status: 'contacted' });

    expect(await comesBack(w, sent, 'gmail-reply')).toBe('applied');
    const l = await lead(w);
    expect(l).toMatchObject({ status: 'replied', replyKind: 'interested' });
    // The API never returns what Jane wrote.
    expect(JSON.stringify(l)).not.toMatch(/head of support/);
    const replied = await env.api().get('/api/v1/leads').query({ status: 'replied' }).set(auth(w.token));
    expect(replied.body.leads.map((x: { id: string }) => x.id)).toEqual([w.leadId]);
    expect(await email(w)).toMatchObject({ sent: 2, replies: 1, positiveReplies: 1, replyRate: 0.5, bounces: 0 });
    expect(await sequenceOfCard(env, seqCard!.id)).toMatchObject({
      status: 'stopped',
      stop_reason: 'the recipient replied',
    });

    // The agent woke and filed a follow-up in the same thread, waiting for a person.
    const [followUp] = await until(async () => {
      const drafts = await waiting(w, 'mail_draft');
      return drafts.length ? drafts : null;
    }, 15_000);
    // It answers Jane's reply (her Message-ID), with our mail and hers as its References.
    const janes = '<CAJx9Lr7f0PqZ3kV1m2Jd8yWq4Hc5uT0bN6s+Qp_2vXw@mail.gmail.com>';
    expect(followUp!.payload).toMatchObject({ to: JANE, inReplyTo: janes, references: [sent.messageId, janes] });
    expect(await wakes(w)).toHaveLength(1);
  });

  it('a Postfix DSN bounces the lead and blocks the address; an out-of-office changes nothing and wakes nobody', async ({
    env,
    smtp,
    inbound,
  }) => {
    const w = await world({ env, smtp, inbound });
    await say(w, `start a sequence to ${JANE} about pricing`);
    const [seqCard] = await waiting(w, 'sequence');
    await env.api().post(`/api/v1/review/${seqCard!.id}/answer`).set(auth(w.token)).send({ action: 'approve' });

    const sent = await draftAndSend(w, 'our pricing for Acme');
    expect(await comesBack(w, sent, 'outlook-auto-reply', `reply+${/reply\+([0-9a-z]+)@/.exec(sent.replyTo!.text)![1]}@localhost`)).toBe(
      'applied',
    );
    expect(await lead(w)).toMatchObject({ status: 'contacted' });
    expect((await sequenceOfCard(env, seqCard!.id)).status).toBe('active');
    expect(await wakes(w)).toHaveLength(0);

    expect(await comesBack(w, sent, 'postfix-dsn-hard')).toBe('applied');
    expect(await lead(w)).toMatchObject({ status: 'bounced' });
    expect(await blockSource(w)).toBe('agent');
    expect(await email(w)).toMatchObject({ bounces: 1, replies: 0 });
    expect((await sequenceOfCard(env, seqCard!.id)).status).toBe('stopped');
    expect(await wakes(w)).toHaveLength(0);
  });

  it('"please unsubscribe me" by reply puts the address on the block list for good and the lead unsubscribed', async ({
    env,
    smtp,
    inbound,
  }) => {
    const w = await world({ env, smtp, inbound });
    const sent = await draftAndSend(w, 'a case study');
    expect(await comesBack(w, sent, 'unsubscribe-reply')).toBe('applied');
    expect(await lead(w)).toMatchObject({ status: 'unsubscribed', replyKind: 'unsubscribe' });
    expect(await blockSource(w)).toBe('opt_out_reply');
    expect(await email(w)).toMatchObject({ unsubscribes: 1, optOuts: 1 });
    expect(await wakes(w)).toHaveLength(0);
    // The agent cannot draft to Jane any more.
    await say(w, `draft an email to ${JANE} about anything`);
    expect(await waiting(w, 'mail_draft')).toEqual([]);
  });

  it('a one-click POST to the List-Unsubscribe URL unsubscribes, with no login', async ({ env, smtp, inbound }) => {
    const w = await world({ env, smtp, inbound });
    const sent = await draftAndSend(w, 'a webinar invite');
    const url = /<(https?:\/\/[^>]+\/u\/[0-9a-z]+)>/.exec(header(sent, 'list-unsubscribe'))![1]!;
    const path = new URL(url).pathname;
    const res = await env.api().post(path).type('form').send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, to: expect.stringMatching(/^.\*\*\*@/) });
    expect(await lead(w)).toMatchObject({ status: 'unsubscribed' });
    expect(await blockSource(w)).toBe('opt_out_reply');
    expect(await email(w)).toMatchObject({ unsubscribes: 1 });
  });
});
