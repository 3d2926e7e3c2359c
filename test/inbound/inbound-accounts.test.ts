import { describe, expect } from 'vitest';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { processInbound } from '../../src/inbound/process.service.js';
import { getLead } from '../../src/leads/leads.service.js';
import { newReplyToken } from '../../src/mail/outbound.js';
import { buildMailedLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rawMessage, smtpDialog, smtpSend } from '../helpers/smtp-client.js';
import { countRows } from '../helpers/rows.js';

// Every received message is stored under its account, known before the message is stored
// (docs/decisions/inbound-smtp.md "Every message is stored under its account"): the account its
// recipient's token names, or for the bare bounce address what the message itself names of ours.

const BOUNCE = 'agent@localhost';

const world = async (env: TestEnv) => buildMailedLead(env.deps.db, (await env.tenant()).accountId);
const reply = (token: string) => `reply+${token}@localhost`;
const idOf = (response: string) => /queued as (\S+)/.exec(response)?.[1] ?? null;
const stored = (env: TestEnv) => countRows(env, 'inbound_messages');
const bytesOf = async (env: TestEnv, accountId: string) => inboundRepository(env.deps.db).accountBytes(accountId);

/** One message naming both reply addresses, with one fixed Message-ID (CRLF lines, nothing to dot-stuff). */
function sharedMessage(to: string[], messageId: string): Buffer {
  const lines = [
    'From: Jane <jane@acme.test>',
    `To: ${to.join(', ')}`,
    'Subject: Re: hello',
    `Message-ID: ${messageId}`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'Thanks, sounds good. Happy to talk next week.',
    '',
  ];
  return Buffer.from(lines.join('\r\n'));
}

describe('inbound messages keyed by account', () => {
  it('stores two accounts’ copies of one Message-ID apart: one account per transaction, the other resent after 452', async ({
    env,
    inbound: smtp,
  }) => {
    const a = await world(env);
    const b = await world(env);
    const messageId = `<shared-${newReplyToken()}@acme.test>`;
    const raw = sharedMessage([reply(a.thread.replyToken), reply(b.thread.replyToken)], messageId);
    const s = await smtpDialog(smtp.port);
    const ids: string[] = [];
    try {
      expect(await s.reply()).toMatch(/^220 /);
      await s.say('EHLO sender.test');
      expect(await s.say('MAIL FROM:<jane@acme.test>')).toMatch(/^250 /);
      expect(await s.say(`RCPT TO:<${reply(a.thread.replyToken)}>`)).toMatch(/^250 /);
      // Another account's address in the same transaction: the sender's MTA sends it in another one.
      expect(await s.say(`RCPT TO:<${reply(b.thread.replyToken)}>`)).toMatch(/^452 4\.5\.3 this message already goes to another account/);
      expect(await s.say('DATA')).toMatch(/^354 /);
      const first = await s.data(raw);
      expect(first).toMatch(/^250 /);
      ids.push(idOf(first)!);
      expect(await s.say('MAIL FROM:<jane@acme.test>')).toMatch(/^250 /);
      expect(await s.say(`RCPT TO:<${reply(b.thread.replyToken)}>`)).toMatch(/^250 /);
      expect(await s.say('DATA')).toMatch(/^354 /);
      const second = await s.data(raw);
      expect(second).toMatch(/^250 /);
      ids.push(idOf(second)!);
    } finally {
      s.close();
    }
    const repo = inboundRepository(env.deps.db);
    // Stored under its account from the start, before any processing.
    expect(await repo.find(ids[0]!)).toMatchObject({ accountId: a.accountId, status: 'received', rcptTo: [reply(a.thread.replyToken)] });
    expect(await repo.find(ids[1]!)).toMatchObject({ accountId: b.accountId, status: 'received', rcptTo: [reply(b.thread.replyToken)] });
    for (const id of ids) await processInbound(env.deps, id);
    // The same Message-ID is applied once per account, never a duplicate across accounts.
    expect(await repo.find(ids[0]!)).toMatchObject({
      status: 'applied',
      accountId: a.accountId,
      sendId: a.thread.sendId,
      headerMessageId: messageId,
    });
    expect(await repo.find(ids[1]!)).toMatchObject({
      status: 'applied',
      accountId: b.accountId,
      sendId: b.thread.sendId,
      headerMessageId: messageId,
    });
    for (const w of [a, b]) expect((await getLead(env.deps.db, w.accountId, w.leadId)).status).toBe('replied');
  });

  it('refuses a message to an address naming no account, and stores nothing', async ({ env, inbound: smtp }) => {
    const a = await world(env);
    const before = await stored(env);
    const bytesBefore = await bytesOf(env, a.accountId);
    // A token-shaped address that names no mail of ours: refused at RCPT.
    const guessed = await smtpSend(smtp.port, { from: 'x@spam.test', to: [reply(newReplyToken())], raw: rawMessage() });
    expect(guessed).toMatchObject({ ok: false, code: 550, response: expect.stringContaining('5.1.1') });
    // The bare bounce address with a message that names nothing of ours (no token, Message-ID or sender we mailed):
    // its account cannot be known, so it is refused after its data, before anything is stored.
    const stranger = rawMessage({ from: 'Sam <sam@elsewhere.test>', to: BOUNCE });
    const answer = await smtpSend(smtp.port, { from: 'sam@elsewhere.test', to: [BOUNCE], raw: stranger });
    expect(answer).toMatchObject({ ok: false, code: 550, response: expect.stringContaining('5.7.1 this message answers no mail of ours') });
    // A message that cannot be parsed names nothing either.
    const garbage = await smtpSend(smtp.port, { from: '', to: [BOUNCE], raw: Buffer.from('garbage without any header\r\n') });
    expect(garbage).toMatchObject({ ok: false, code: 550 });
    expect(await stored(env)).toBe(before);
    expect(await bytesOf(env, a.accountId)).toBe(bytesBefore);
  });

  it('stores a message to the bounce address under the account whose Message-ID it answers, charged to it on arrival', async ({
    env,
    inbound: smtp,
  }) => {
    const a = await world(env);
    const before = await bytesOf(env, a.accountId);
    const raw = Buffer.concat([Buffer.from(`In-Reply-To: ${a.thread.messageId}\r\n`), rawMessage({ to: BOUNCE })]);
    const answer = await smtpSend(smtp.port, { from: 'jane@acme.test', to: [BOUNCE], raw });
    expect(answer).toMatchObject({ ok: true, code: 250 });
    const id = idOf(answer.response)!;
    expect(await inboundRepository(env.deps.db).find(id)).toMatchObject({ accountId: a.accountId, status: 'received' });
    expect(await bytesOf(env, a.accountId)).toBe(before + raw.length);
    await processInbound(env.deps, id);
    expect(await inboundRepository(env.deps.db).find(id)).toMatchObject({
      status: 'applied',
      accountId: a.accountId,
      details: { matchedBy: 'in-reply-to' },
    });
  });
});
