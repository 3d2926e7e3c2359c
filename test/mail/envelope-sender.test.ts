import { readFile } from 'node:fs/promises';
import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { getLead } from '../../src/leads/leads.service.js';
import { httpTransport } from '../../src/mail/http.transport.js';
import { localTransport } from '../../src/mail/local.transport.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import { sentThread } from '../helpers/sent-thread.js';
import { adminCall, envFor } from '../helpers/env.js';
import { buildCard, buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { runTs, until } from '../helpers/processes.js';
import { rawMessage, smtpSend } from '../helpers/smtp-client.js';
import { startHttpProvider } from '../helpers/smtp-http-provider.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

// Each send's SMTP envelope sender is bounces+<its token>@INBOUND_MAIL_DOMAIN (VERP), its From the
// account's sending identity; a DSN to that address comes back over SMTP to the inbound listener and is
// matched by the token alone. Everything goes over real SMTP on loopback: the outbound stand-in records
// each envelope, the service's own inbound listener takes what comes back.

const ALLOWED = 'acme-sender.test,growthco.example';
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), MAIL_ALLOWED_FROM_DOMAINS: ALLOWED },
  pools: ['inbound-mail'],
}));

interface Sent {
  thread: Thread & { replyToken: string };
  envelopeFrom: string;
  from: string;
  leadId: string;
}

/** A person sends a mail card to `to` (a contact of a lead of the account) through the API; what the SMTP server got. */
async function send(
  env: TestEnv,
  smtp: TestSmtp,
  account: { accountId: string; token: string },
  to: string,
  subject: string,
): Promise<Sent> {
  const { id: leadId } = await buildLead(env.deps.db, account.accountId, {
    domain: to.split('@')[1]!,
    contacts: [{ name: 'X', email: to }],
  });
  const card = await buildCard(env.deps.db, account.accountId, 'mail_draft', {
    payload: { work: 'email', to, draft: { subject, body: 'Hello' } },
  });
  const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(account.token)).send({});
  expect(res.status).toBe(200);
  const thread = (await sentThread(env.deps.db, env.config, res.body.sendId))!;
  const got = smtp.received.find((m) => m.raw.includes(`Subject: ${subject}`))!;
  const parsed = await simpleParser(got.raw);
  const from = parsed.from!.value[0]!;
  return { thread, envelopeFrom: got.from, from: `${from.name} <${from.address}>`, leadId };
}

/** `raw` over SMTP to the inbound listener (null sender, as a DSN comes), then the stored row once it is settled. */
async function comesBack(env: TestEnv, inbound: InboundSmtp, rcpt: string, raw: Buffer) {
  const answer = await smtpSend(inbound.port, { from: '', to: [rcpt], raw });
  expect(answer.code).toBe(250);
  const id = /queued as (\S+)/.exec(answer.response)![1]!;
  return until(async () => {
    const r = await row(env, 'inbound_messages', { id });
    return r && r.status !== 'received' ? r : null;
  }, 15_000);
}

const blocked = async (env: TestEnv, accountId: string) =>
  (await rows(env, 'blocklist_entries', { account_id: accountId })).map((r) => ({ value: r.value, source: r.source }));

async function bounces(env: TestEnv, token: string): Promise<number | null> {
  const res = await env.api().get('/api/v1/results').set(auth(token));
  expect(res.status).toBe(200);
  const e = ResultsResponse.parse(res.body).results.email;
  if (!e.available) throw new Error('email results not available');
  return e.data.window.bounces;
}

/** The VERP fixture (a Postfix DSN that quotes nothing of the original) for this thread, naming `recipient` as failed. */
const verpDsn = (thread: Thread & { replyToken: string }, recipient = thread.to) =>
  Buffer.from(
    mailFixture('postfix-dsn-verp', { replyToken: thread.replyToken }).toString('latin1').replaceAll('jane@acme.test', recipient),
    'latin1',
  );

describe('the envelope sender of a send', () => {
  it('is bounces+<the send reply token>@INBOUND_MAIL_DOMAIN while the visible From stays MAIL_FROM', async ({ env, smtp }) => {
    const account = await env.tenant();
    const sent = await send(env, smtp, account, 'jane@acme.test', 'subject-envelope');
    expect(sent.envelopeFrom).toBe(`bounces+${sent.thread.replyToken}@localhost`);
    expect(sent.from).toBe('Growth Agent <agent@localhost>');
  });

  it('is carried by the local transport as Return-Path and by the HTTP transport as envelopeFrom', async () => {
    const dir = `/tmp/gas-envelope-${process.pid}`;
    const message = { from: 'A <a@growthco.example>', to: 'j@acme.test', subject: 's', text: 't', envelopeFrom: 'bounces+abc@localhost' };
    await localTransport(dir).send(message, 'env-key-1');
    expect((await readFile(`${dir}/env-key-1.eml`, 'utf8')).split('\r\n')[0]).toBe('Return-Path: <bounces+abc@localhost>');
    const provider = await startHttpProvider();
    try {
      await httpTransport({ url: provider.url, key: null, sendTimeoutMs: 5_000 }).send(message, 'env-key-2');
      expect(provider.messages[0]!.body.envelopeFrom).toBe('bounces+abc@localhost');
    } finally {
      await provider.close();
    }
  });
});

describe('a DSN to bounces+<token>', () => {
  it('bounces the send it names and blocks the address though it quotes nothing of the original', async ({ env, smtp, inbound }) => {
    const account = await env.tenant();
    const sent = await send(env, smtp, account, 'jane@acme.test', 'subject-verp-dsn');
    const raw = verpDsn(sent.thread);
    expect(raw.toString('latin1')).not.toContain(sent.thread.messageId);
    const found = await comesBack(env, inbound, sent.envelopeFrom, raw);
    expect(found).toMatchObject({ status: 'applied', kind: 'bounce', send_id: sent.thread.sendId });
    expect(found.details).toMatchObject({ matchedBy: 'bounce-address', proof: 'token', bounce: { type: 'hard', status: '5.1.1' } });
    expect(await blocked(env, account.accountId)).toEqual([{ value: 'jane@acme.test', source: 'agent' }]);
    expect((await getLead(env.deps.db, account.accountId, sent.leadId)).status).toBe('bounced');
    expect(await bounces(env, account.token)).toBe(1);
  });

  it('takes mail to bounces+<token> that is no report as automatic: nothing changes, nobody wakes', async ({ env, smtp, inbound }) => {
    const account = await env.tenant();
    const sent = await send(env, smtp, account, 'cr@acme.test', 'subject-challenge');
    // A challenge-response system writes to the envelope sender as a person would.
    const raw = rawMessage({ from: 'Verify <verify@acme.test>', to: sent.envelopeFrom, body: 'Thanks, sounds great! Reply to confirm.' });
    expect(await comesBack(env, inbound, sent.envelopeFrom, raw)).toMatchObject({
      status: 'applied',
      kind: 'auto_reply',
      send_id: sent.thread.sendId,
    });
    expect((await getLead(env.deps.db, account.accountId, sent.leadId)).status).toBe('contacted');
    expect(await rows(env, 'agent_turns', { account_id: account.accountId, kind: 'wake' })).toEqual([]);
    expect(await blocked(env, account.accountId)).toEqual([]);
  });

  it('is refused at RCPT for a token naming no send; the old bounce address (MAIL_FROM at the inbound domain) is still taken', async ({
    env,
    smtp,
    inbound,
  }) => {
    const account = await env.tenant();
    const sent = await send(env, smtp, account, 'old@acme.test', 'subject-old-bounce');
    const unknown = await smtpSend(inbound.port, {
      from: '',
      to: ['bounces+0000000000000000000000nope@localhost'],
      raw: verpDsn(sent.thread),
    });
    expect(unknown.code).toBe(550);
    // Mail sent before this change bounced to agent@localhost: such a DSN quotes the original and still bounces it.
    const quoting = Buffer.from(
      mailFixture('postfix-dsn-hard', sent.thread).toString('latin1').replaceAll('jane@acme.test', 'old@acme.test'),
      'latin1',
    );
    const found = await comesBack(env, inbound, 'agent@localhost', quoting);
    expect(found).toMatchObject({ status: 'applied', kind: 'bounce', send_id: sent.thread.sendId });
    expect(await blocked(env, account.accountId)).toEqual([{ value: 'old@acme.test', source: 'agent' }]);
  });

  it("never touches another account: a DSN to A's bounce address naming B's recipient changes nothing of B (nor of A)", async ({
    env,
    smtp,
    inbound,
  }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    const sentA = await send(env, smtp, a, 'ann@a-corp.test', 'subject-tenant-a');
    const sentB = await send(env, smtp, b, 'bob@b-corp.test', 'subject-tenant-b');
    const found = await comesBack(env, inbound, sentA.envelopeFrom, verpDsn(sentA.thread, 'bob@b-corp.test'));
    expect(found).toMatchObject({ status: 'unplaced', reason: 'a report to a bounce address names another recipient than its send' });
    for (const [account, sent] of [
      [b, sentB],
      [a, sentA],
    ] as const) {
      expect(await blocked(env, account.accountId)).toEqual([]);
      expect((await getLead(env.deps.db, account.accountId, sent.leadId)).status).toBe('contacted');
      expect(await bounces(env, account.token)).toBe(0);
    }
    // A's own bounce settles A's send only; B's address, lead and figures stay as they were.
    expect(await comesBack(env, inbound, sentA.envelopeFrom, verpDsn(sentA.thread))).toMatchObject({
      status: 'applied',
      send_id: sentA.thread.sendId,
    });
    expect(await blocked(env, a.accountId)).toEqual([{ value: 'ann@a-corp.test', source: 'agent' }]);
    expect(await blocked(env, b.accountId)).toEqual([]);
    expect((await getLead(env.deps.db, b.accountId, sentB.leadId)).status).toBe('contacted');
    expect(await bounces(env, b.token)).toBe(0);
  });
});

describe('mail sender set', () => {
  it("makes the account's sends carry its own From, other accounts keep MAIL_FROM, bounces still go to bounces+token", async ({
    env,
    smtp,
  }) => {
    const a = await env.tenant();
    const other = await env.tenant();
    const set = await adminCall(env, ['mail', 'sender', 'set', '--account', a.accountId, '--from', 'Acme Sales <Sales@Acme-Sender.test>']);
    expect(set).toEqual({ out: { account: { id: a.accountId }, from: 'Acme Sales <Sales@acme-sender.test>' } });
    const sent = await send(env, smtp, a, 'kim@acme.test', 'subject-own-from');
    expect(sent.from).toBe('Acme Sales <Sales@acme-sender.test>');
    expect(sent.envelopeFrom).toBe(`bounces+${sent.thread.replyToken}@localhost`);
    expect((await send(env, smtp, other, 'kim@acme.test', 'subject-default-from')).from).toBe('Growth Agent <agent@localhost>');
    const audit = await rows(env, 'audit_log', { account_id: a.accountId, route: 'mail sender set' });
    expect(audit).toHaveLength(1);
  });

  it('keeps a display name with punctuation whole (quoted), and the latest identity set is the one sent', async ({ env, smtp }) => {
    const a = await env.tenant();
    await adminCall(env, ['mail', 'sender', 'set', '--account', a.accountId, '--from', 'first@acme-sender.test']);
    const set = await adminCall(env, ['mail', 'sender', 'set', '--account', a.accountId, '--from', 'Acme, Inc.  <Hi@acme-sender.test>']);
    expect(set.out?.from).toBe('"Acme, Inc." <Hi@acme-sender.test>');
    expect((await send(env, smtp, a, 'lee@acme.test', 'subject-quoted-name')).from).toBe('Acme, Inc. <Hi@acme-sender.test>');
  });

  it('refuses a domain the operator did not allow, a second address, a line break and an unknown account, naming the rule', async ({
    env,
  }) => {
    const { accountId } = await env.tenant();
    const cases: [string, string, RegExp][] = [
      [
        accountId,
        'Eve <eve@evil.test>',
        new RegExp(
          '^--from must be an address at a domain the operator allowed ' +
            '\\(MAIL_ALLOWED_FROM_DOMAINS: acme-sender\\.test, growthco\\.example\\); evil\\.test is not one$',
        ),
      ],
      [accountId, 'a@acme-sender.test, b@acme-sender.test', /^--from must be one address/],
      [accountId, 'A <a@acme-sender.test>\r\nBcc: x@evil.test', /^--from must be one line$/],
      [accountId, 'sub <a@mail.acme-sender.test>', /mail\.acme-sender\.test is not one$/],
      ['acct_missing', 'A <a@acme-sender.test>', /^not found$/],
    ];
    for (const [account, from, rule] of cases) {
      expect((await adminCall(env, ['mail', 'sender', 'set', '--account', account, '--from', from])).error, from).toMatch(rule);
    }
    expect((await row(env, 'accounts', { id: accountId })).mail_from).toBeNull();
  });

  it('answers one JSON line from the CLI process, and one JSON error line on a refusal', { timeout: 120_000 }, async ({ env }) => {
    const { accountId } = await env.tenant();
    const cli = (from: string) =>
      runTs(['bin/admin.ts', 'mail', 'sender', 'set', '--account', accountId, '--from', from], {
        ...envFor(env.config),
        MAIL_ALLOWED_FROM_DOMAINS: ALLOWED,
      });
    const ok = await cli('Sam Lee <sam@growthco.example>');
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ account: { id: accountId }, from: 'Sam Lee <sam@growthco.example>' });
    const refused = await cli('Sam <sam@localhost>');
    expect(refused.code).toBe(1);
    const lines = refused.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!).error).toMatch(/MAIL_ALLOWED_FROM_DOMAINS: acme-sender\.test, growthco\.example\); localhost is not one$/);
  });
});
