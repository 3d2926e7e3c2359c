import request from 'supertest';
import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { configWith } from '../helpers/config.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { createInboundUrl } from '../../src/inbound/intake.service.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { inboundParse } from '../../src/jobs/inbound-mail.js';
import { newReplyToken } from '../../src/mail/outbound.js';
import { threadsRepository } from '../../src/mail/threads.repository.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/logger.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { tcpProxy } from '../helpers/outages.js';
import { rawMessage, smtpDialog, smtpSend } from '../helpers/smtp-client.js';
import { countRows, rows } from '../helpers/rows.js';

// The inbound MX: what it takes, what it refuses, and that a 250 means stored.

/** The file's own listener (its log lines kept), beside `small` with a low size limit. */
let listener: InboundSmtp;
/** A live reply token of ours (a shipped mail's), and the bounce address (MAIL_FROM at the inbound domain). */
let TOKEN = '';
let LIVE = '';
/** The account the token belongs to: every message taken here is stored under it. */
let ACCOUNT = '';
const BOUNCE = 'agent@localhost';
let small: InboundSmtp;
const SMALL_LIMIT = 4_096;
const logLines: string[] = [];
it.beforeAll(async ({ env }) => {
  const { accountId } = await env.tenant();
  ACCOUNT = accountId;
  TOKEN = newReplyToken();
  await threadsRepository(env.deps.db).insert({
    sendId: `send_${TOKEN}`,
    accountId,
    cardId: 'card_smtp',
    leadId: null,
    sequenceId: null,
    step: 0,
    replyToken: TOKEN,
    messageId: `<mail-${TOKEN}@localhost>`,
    to: 'jane@acme.test',
    createdAt: Date.now(),
  });
  LIVE = `reply+${TOKEN}@localhost`;
  const logger = createLogger('info', { write: (line: string) => logLines.push(line) });
  listener = await startInboundSmtp({ ...env.deps, logger }, { port: 0, host: '127.0.0.1' });
  const config = { ...env.deps.config, inbound: { ...env.deps.config.inbound, maxBytes: SMALL_LIMIT } };
  small = await startInboundSmtp({ ...env.deps, config }, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await listener?.close();
  await small?.close();
});

const storedCount = (env: TestEnv) => countRows(env, 'inbound_messages');
const idOf = (response: string) => /queued as (\S+)/.exec(response)?.[1] ?? null;

describe('the inbound SMTP listener', () => {
  it('answers 250 only once the message is stored byte for byte, and queues its parse', async ({ env }) => {
    // The domain in any case (the client lowercases it). Dot-stuffed lines and 8-bit text: what comes out
    // must be what went in.
    const raw = Buffer.concat([rawMessage({ body: '.leading dot\r\n..two dots\r\nsmörgåsbord ✓' }), Buffer.from('tail line\r\n')]);
    const answer = await smtpSend(listener.port, { from: 'jane@acme.test', to: [`Reply+${TOKEN.toUpperCase()}@LocalHost`], raw });
    expect(answer).toMatchObject({ ok: true, code: 250 });
    const id = idOf(answer.response);
    expect(id).toMatch(/^inb_/);
    const row = await inboundRepository(env.deps.db).withRaw(id!);
    expect(row).toMatchObject({
      via: 'smtp',
      status: 'received',
      mailFrom: 'jane@acme.test',
      rcptTo: [`Reply+${TOKEN.toUpperCase()}@localhost`],
    });
    // Stored under the account its token names, known before the message was stored.
    expect(row!.accountId).toBe(ACCOUNT);
    expect(row!.raw.equals(raw)).toBe(true);
    expect(row!.size).toBe(raw.length);
    const job = await pendingJob(env.deps.queues.get('inbound-mail')!, inboundParse.key({ id: id! }));
    expect(job?.data).toEqual({ id });
    // Logs name the message by id and size, never its addresses or words.
    const logged = logLines.join('\n');
    expect(logged).toContain(id!);
    expect(logged).not.toContain('smörgåsbord');
    expect(logged).not.toContain('jane@acme.test');
  });

  it('keeps a null sender (a bounce comes from <>) as no mailFrom', async ({ env }) => {
    // To the bare bounce address: the message names the account (its To: is our reply address).
    const answer = await smtpSend(listener.port, { from: '', to: [BOUNCE], raw: rawMessage({ to: LIVE }) });
    expect(answer.ok).toBe(true);
    expect(await inboundRepository(env.deps.db).find(idOf(answer.response)!)).toMatchObject({ mailFrom: null, accountId: ACCOUNT });
  });

  it('refuses recipients at any other domain with 550 relay not permitted, and stores nothing', async ({ env }) => {
    const before = await storedCount(env);
    for (const to of ['someone@example.com', 'reply+abc@localhost.evil.test', 'x@notlocalhost']) {
      const answer = await smtpSend(listener.port, { from: 'jane@acme.test', to: [to], raw: rawMessage() });
      expect(answer.ok, to).toBe(false);
      expect(answer.code, to).toBe(550);
      expect(answer.response, to).toContain('relay not permitted');
    }
    expect(await storedCount(env)).toBe(before);
  });

  it('takes a message for its domain when another recipient of it is refused, naming only the accepted one', async ({ env }) => {
    const answer = await smtpSend(listener.port, { from: 'jane@acme.test', to: ['a@elsewhere.test', LIVE], raw: rawMessage() });
    expect(answer.ok).toBe(true);
    expect((await inboundRepository(env.deps.db).find(idOf(answer.response)!))?.rcptTo).toEqual([LIVE]);
  });

  it('refuses a message over the limit with 552 and stores nothing; one at the limit goes in', async ({ env }) => {
    const before = await storedCount(env);
    const base = rawMessage();
    const over = Buffer.concat([base, Buffer.from(`${'x'.repeat(78)}\r\n`.repeat(Math.ceil(SMALL_LIMIT / 80)))]);
    const refused = await smtpSend(small.port, { from: 'jane@acme.test', to: [LIVE], raw: over });
    expect(refused).toMatchObject({ ok: false, code: 552 });
    expect(refused.response).toContain(String(SMALL_LIMIT));
    expect(await storedCount(env)).toBe(before);
    const exact = Buffer.concat([base, Buffer.from('y'.repeat(SMALL_LIMIT - base.length - 2)), Buffer.from('\r\n')]);
    expect(exact.length).toBe(SMALL_LIMIT);
    const taken = await smtpSend(small.port, { from: 'jane@acme.test', to: [LIVE], raw: exact });
    expect(taken.ok).toBe(true);
    expect((await inboundRepository(env.deps.db).withRaw(idOf(taken.response)!))!.raw.equals(exact)).toBe(true);
  });

  it('refuses a 30 MB message streamed against the default 25 MiB limit with 552, and stores nothing', async ({ env }) => {
    expect(env.deps.config.inbound.maxBytes).toBe(25 * 1024 * 1024);
    const before = await storedCount(env);
    const line = Buffer.from(`${'z'.repeat(998)}\r\n`);
    const big = Buffer.concat([rawMessage(), ...Array.from({ length: 30_000 }, () => line)]);
    expect(big.length).toBeGreaterThan(30_000_000);
    // By hand, without SIZE= on MAIL FROM: the whole message goes on the wire and is refused after its dot.
    const session = await smtpDialog(listener.port);
    try {
      await session.reply();
      await session.say('EHLO client.test');
      expect(await session.say('MAIL FROM:<jane@acme.test>')).toMatch(/^250 /);
      expect(await session.say(`RCPT TO:<${LIVE}>`)).toMatch(/^250 /);
      expect(await session.say('DATA')).toMatch(/^354 /);
      expect(await session.data(big)).toMatch(/^552 5\.3\.4 message exceeds fixed maximum message size 26214400/);
      // The session goes on: the next message is taken.
      expect(await session.say('MAIL FROM:<jane@acme.test>')).toMatch(/^250 /);
    } finally {
      session.close();
    }
    expect(await storedCount(env)).toBe(before);
    // A client that declares the size is refused before it sends anything.
    const declared = await smtpSend(listener.port, { from: 'jane@acme.test', to: [LIVE], raw: big });
    expect(declared).toMatchObject({ ok: false, code: 552 });
    expect(await storedCount(env)).toBe(before);
  }, 30_000);

  it('advertises SIZE (no STARTTLS, no AUTH), refuses a declared SIZE over it, and takes its domain in any case', async () => {
    const smtpSession = await smtpDialog(small.port);
    try {
      expect(await smtpSession.reply()).toMatch(/^220 /);
      const ehlo = await smtpSession.say('EHLO client.test');
      expect(ehlo).toContain(`SIZE ${SMALL_LIMIT}`);
      expect(ehlo).not.toContain('STARTTLS');
      expect(ehlo).not.toContain('AUTH');
      expect(await smtpSession.say(`MAIL FROM:<jane@acme.test> SIZE=${SMALL_LIMIT + 1}`)).toMatch(/^552 /);
      expect(await smtpSession.say('MAIL FROM:<jane@acme.test> SIZE=100')).toMatch(/^250 /);
      expect(await smtpSession.say(`RCPT TO:<Reply+${TOKEN.toUpperCase()}@LOCALHOST>`)).toMatch(/^250 /);
      expect(await smtpSession.say('RCPT TO:<q@LOCALHOST.example>')).toMatch(/^550 .*relay not permitted/);
      expect(await smtpSession.say('AUTH PLAIN AGphbmUAcHc=')).toMatch(/^5\d\d /);
    } finally {
      smtpSession.close();
    }
  });
});

describe('the inbound SMTP listener with Postgres out of reach', () => {
  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  let deps: Deps;
  let cut: InboundSmtp;
  it.beforeAll(async ({ env }) => {
    proxy = await tcpProxy(Number(new URL(env.config.databaseUrl).port || 5432));
    const url = new URL(env.config.databaseUrl);
    url.port = String(proxy.port);
    deps = createDeps(configWith({ DATABASE_URL: url.toString(), QUEUE_PREFIX: env.config.queuePrefix }), createLogger('silent'));
    await deps.ready();
    cut = await startInboundSmtp(deps, { port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await cut?.close();
    await deps?.close();
    await proxy?.close();
  });

  it('answers 451 (try again later) and keeps nothing; once Postgres is back the retry is taken', async ({ env }) => {
    const raw = rawMessage({ body: 'retry me' });
    proxy.cut();
    const refused = await smtpSend(cut.port, { from: 'jane@acme.test', to: [LIVE], raw });
    expect(refused).toMatchObject({ ok: false, code: 451 });
    proxy.restore();
    const retried = await smtpSend(cut.port, { from: 'jane@acme.test', to: [LIVE], raw });
    expect(retried.ok).toBe(true);
    const stored: { raw: Buffer }[] = await rows(env, 'inbound_messages').select('raw');
    expect(stored.filter((r) => r.raw.equals(raw))).toHaveLength(1);
  });

  it('answers 503 with Retry-After on the inbound URL (a retry is safe), never a 500', async ({ env }) => {
    const { accountId } = await env.tenant();
    const { url } = await createInboundUrl(env.deps, accountId);
    proxy.cut();
    try {
      const res = await request(createApp(deps)).post(new URL(url).pathname).set('Content-Type', 'message/rfc822').send(rawMessage());
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBeDefined();
      expect(res.body).toEqual({ error: 'temporarily unavailable' });
    } finally {
      proxy.restore();
    }
  });
});
