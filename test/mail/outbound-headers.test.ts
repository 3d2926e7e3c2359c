import { readFile } from 'node:fs/promises';
import { simpleParser, type ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import { getLead } from '../../src/leads/leads.service.js';
import { localTransport } from '../../src/mail/local.transport.js';
import { REPLY_TOKEN } from '../../src/mail/outbound.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import { sentThread } from '../helpers/sent-thread.js';
import { buildCard, buildLead } from '../helpers/factories.js';
import type { TestEnv } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { afterLostAnswer } from '../helpers/lost-answer.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

// What every shipped mail carries ("Threading" and "One-click unsubscribe"): received by a real
// SMTP server on loopback and read back with mailparser, as a recipient's mail client would.

const DOMAIN = 'mail.example.test';
const BASE = 'https://agent.example.test';
const THREAD_ENV = { INBOUND_MAIL_DOMAIN: DOMAIN, BASE_URL: BASE };

it.override('options', ({ smtp }) => ({ env: { ...smtpEnv(smtp), ...THREAD_ENV } }));

/** A header as its lines say it, unfolded (mailparser turns List-* into objects; the test reads the text). */
const headerText = (m: ParsedMail, name: string) =>
  m.headerLines
    .find((h) => h.key === name.toLowerCase())
    ?.line.slice(name.length + 1)
    .replace(/\r?\n[ \t]+/g, ' ')
    .trim() ?? null;

async function sendMailCard(env: TestEnv, to: string, subject: string) {
  const { token, accountId } = await env.tenant();
  const card = await buildCard(env.deps.db, accountId, 'mail_draft', { payload: { work: 'email', to, draft: { subject, body: 'Hello' } } });
  const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
  return { res, accountId, token, card };
}

async function receivedWith(smtp: TestSmtp, subject: string): Promise<ParsedMail> {
  const mail = smtp.received.find((m) => m.raw.includes(subject));
  if (!mail) throw new Error(`no mail with subject ${subject}`);
  return simpleParser(mail.raw);
}

function expectThreadHeaders(m: ParsedMail, thread: Thread & { replyToken: string }) {
  const t = thread.replyToken;
  expect(m.messageId).toBe(thread.messageId);
  expect(m.replyTo?.value.map((a) => a.address)).toEqual([`reply+${t}@${DOMAIN}`]);
  expect(headerText(m, 'List-Unsubscribe')).toBe(`<mailto:unsubscribe+${t}@${DOMAIN}?subject=unsubscribe>, <${BASE}/u/${t}>`);
  expect(headerText(m, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
}

describe('a mail shipped over SMTP', () => {
  it('carries Message-ID <key@INBOUND_MAIL_DOMAIN>, Reply-To reply+token, List-Unsubscribe and List-Unsubscribe-Post', async ({
    env,
    smtp,
  }) => {
    const { res, accountId, card } = await sendMailCard(env, 'Jane Doe <Jane@Acme.test>', 'subject-headers');
    expect(res.status).toBe(200);
    const sendId: string = res.body.sendId;
    const thread = await sentThread(env.deps.db, env.config, sendId);
    expect(thread).toMatchObject({
      accountId,
      cardId: card.id,
      step: 0,
      to: 'jane@acme.test',
      leadId: expect.stringMatching(/^lead_/),
      sequenceId: null,
    });
    expect(thread!.replyToken).toMatch(REPLY_TOKEN);
    expect(thread!.replyToken.length).toBeGreaterThanOrEqual(22);
    expect(thread!.messageId).toBe(`<mail-${sendId}@${DOMAIN}>`);
    const fence = await row(env, 'shipments', { id: sendId });
    expect(fence.details).toMatchObject({ replyTokenSealed: expect.stringMatching(/^v[12]\./), messageId: thread!.messageId });
    expect(JSON.stringify(fence.details)).not.toContain(thread!.replyToken);
    expectThreadHeaders(await receivedWith(smtp, 'subject-headers'), thread!);
  });

  it('gives every send its own token and Message-ID', async ({ env }) => {
    const a = await sendMailCard(env, 'a@acme.test', 'subject-own-a');
    const b = await sendMailCard(env, 'b@acme.test', 'subject-own-b');
    const [ta, tb] = await Promise.all([a, b].map((s) => sentThread(env.deps.db, env.config, s.res.body.sendId)));
    expect(ta!.replyToken).not.toBe(tb!.replyToken);
    expect(ta!.messageId).not.toBe(tb!.messageId);
  });

  it('keeps In-Reply-To and References on a reply beside the thread headers', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_reply', {
      payload: { work: 'email', to: 'bo@globex.test', inReplyTo: '<their-1@globex.test>', draft: { subject: 'subject-re', body: 'x' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    const m = await receivedWith(smtp, 'subject-re');
    expect(m.inReplyTo).toBe('<their-1@globex.test>');
    expect(m.references).toBe('<their-1@globex.test>');
    expectThreadHeaders(m, (await sentThread(env.deps.db, env.config, res.body.sendId))!);
  });

  it("finds the account's lead by the contact's address and marks it contacted once the send settles", async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const lead = await buildLead(env.deps.db, accountId, {
      domain: 'initech.test',
      status: 'new',
      contacts: [{ email: 'Peter@Initech.test' }],
    });
    const other = await env.tenant();
    await buildLead(env.deps.db, other.accountId, { domain: 'initech.test', status: 'new', contacts: [{ email: 'peter@initech.test' }] });
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'peter@initech.test', draft: { subject: 'subject-lead', body: 'Hi' } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    expect((await sentThread(env.deps.db, env.config, res.body.sendId))?.leadId).toBe(lead.id);
    expect((await getLead(env.deps.db, accountId, lead.id)).status).toBe('contacted');
  });

  it('never moves a lead that replied back to contacted', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const lead = await buildLead(env.deps.db, accountId, {
      domain: 'hooli.test',
      status: 'replied',
      replyKind: 'interested',
      contacts: [{ email: 'gavin@hooli.test' }],
    });
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'gavin@hooli.test', draft: { subject: 'subject-replied', body: 'Hi' } },
    });
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({})).status).toBe(200);
    expect(await getLead(env.deps.db, accountId, lead.id)).toMatchObject({ status: 'replied', replyKind: 'interested' });
  });

  it('gives the send after a refused one a fresh token and Message-ID (the refused fence keeps its own, unsent)', async ({ smtp, env }) => {
    smtp.mode = { kind: 'refuse', code: 451 };
    const first = await sendMailCard(env, 'nia@acme.test', 'subject-refused');
    expect(first.res.status).toBe(503);
    smtp.mode = { kind: 'accept' };
    const again = await env.api().post(`/api/v1/review/${first.card.id}/send`).set(auth(first.token)).send({});
    expect(again.status).toBe(200);
    const threads = await rows(env, 'mail_threads', { card_id: first.card.id });
    expect(threads).toHaveLength(2);
    expect(new Set(threads.map((t: { reply_token_hash: string }) => t.reply_token_hash)).size).toBe(2);
    const sent = (await sentThread(env.deps.db, env.config, again.body.sendId))!;
    expect(smtp.received.filter((m) => m.raw.includes('subject-refused'))).toHaveLength(1);
    expectThreadHeaders(await receivedWith(smtp, 'subject-refused'), sent);
  });
});

describe('a mail whose answer was lost, re-shipped by reconciliation over the HTTP mail API', () => {
  it('sends the same Message-ID, Reply-To and List-Unsubscribe under the same key', async () => {
    await afterLostAnswer(
      THREAD_ENV,
      { to: 'lost@acme.test', subject: 'subject-lost', body: 'Hi' },
      async ({ http, provider, fence, cardId, tries }) => {
        const thread = (await sentThread(http.deps.db, http.deps.config, fence.id))!;
        const t = thread.replyToken;
        for (const p of tries) {
          expect(p.body).toMatchObject({
            messageId: thread.messageId,
            replyTo: `reply+${t}@${DOMAIN}`,
            inReplyTo: null,
            headers: {
              'List-Unsubscribe': `<mailto:unsubscribe+${t}@${DOMAIN}?subject=unsubscribe>, <${BASE}/u/${t}>`,
              'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
            },
          });
        }
        expect(provider.messages.filter((m) => m.key === fence.idempotency_key)).toHaveLength(1);
        expect(await rows(http, 'mail_threads', { card_id: cardId })).toHaveLength(1);
      },
    );
  });
});

describe('the local development transport', () => {
  it('keeps the thread headers in the .eml file it writes', async () => {
    const dir = `/tmp/gas-local-thread-${process.pid}-${Date.now()}`;
    const headers = {
      'List-Unsubscribe': `<mailto:unsubscribe+abc@${DOMAIN}?subject=unsubscribe>, <${BASE}/u/abc>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    };
    const message = {
      from: 'Agent <agent@example.test>',
      to: 'jane@acme.test',
      subject: 'Local',
      text: 'Body',
      messageId: `<mail-k9@${DOMAIN}>`,
      replyTo: `reply+abc@${DOMAIN}`,
      headers,
    };
    await localTransport(dir).send(message, 'mail-k9');
    const m = await simpleParser(await readFile(`${dir}/mail-k9.eml`));
    expect(m.messageId).toBe(`<mail-k9@${DOMAIN}>`);
    expect(m.replyTo?.value.map((a) => a.address)).toEqual([`reply+abc@${DOMAIN}`]);
    expect(headerText(m, 'List-Unsubscribe')).toBe(headers['List-Unsubscribe']);
    expect(headerText(m, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    expect(await localTransport(dir).lookup('mail-k9')).toMatchObject({ state: 'sent' });
  });
});
