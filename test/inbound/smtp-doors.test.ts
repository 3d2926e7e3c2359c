import { afterAll, describe, expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { storeInbound } from '../../src/inbound/intake.service.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { createLogger } from '../../src/logger.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { clientKey, createClientLimits } from '../../src/inbound/smtp-limits.js';
import { processInbound } from '../../src/inbound/process.service.js';
import { newReplyToken } from '../../src/mail/outbound.js';
import { buildThread } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { rawMessage, smtpDialog, smtpSend } from '../helpers/smtp-client.js';
import { countRows, row } from '../helpers/rows.js';
import { backdate, removeRows } from '../helpers/row-setup.js';

// The inbound SMTP door against strangers: who it takes mail for, how much one client may take of it,
// how much it holds in memory at once. Every case goes over a real socket; the second client is another
// loopback address (127.0.0.2), which Linux routes to the same listener.

const listeners: InboundSmtp[] = [];
const BOUNCE = 'agent@localhost';
const OTHER_CLIENT = '127.0.0.2';

afterAll(async () => {
  for (const l of listeners) await l.close();
});

type Inbound = Config['inbound'];
/** A listener on a free port with some inbound settings changed. */
async function listener(
  env: TestEnv,
  change: Partial<Omit<Inbound, 'smtp'>> & { smtp?: Partial<Inbound['smtp']> } = {},
): Promise<InboundSmtp> {
  const base = env.deps.config.inbound;
  const inbound = { ...base, ...change, smtp: { ...base.smtp, ...change.smtp } };
  const l = await startInboundSmtp({ ...env.deps, config: { ...env.deps.config, inbound } }, { port: 0, host: '127.0.0.1' });
  listeners.push(l);
  return l;
}

/** A shipped mail's thread in a fresh account: its live reply token. */
async function liveToken(env: TestEnv, accountId?: string): Promise<{ token: string; accountId: string }> {
  const account = accountId ?? (await env.tenant()).accountId;
  const token = newReplyToken();
  await buildThread(env.deps.db, account, {
    sendId: `send_${token}`,
    cardId: `card_${token}`,
    replyToken: token,
    messageId: `<mail-${token}@localhost>`,
  });
  return { token, accountId: account };
}

const stored = (env: TestEnv) => countRows(env, 'inbound_messages');
const idOf = (response: string) => /queued as (\S+)/.exec(response)?.[1] ?? null;

/** The SQL statements the test database runs while `fn` does. */
async function statementsDuring(env: TestEnv, fn: () => Promise<void>): Promise<string[]> {
  const seen: string[] = [];
  const on = (q: { sql: string }) => seen.push(q.sql);
  env.deps.db.on('query', on);
  try {
    await fn();
  } finally {
    env.deps.db.removeListener('query', on);
  }
  return seen;
}

describe('who the listener takes mail for', () => {
  it('refuses at RCPT, with 550 5.1.1 and no write, any local part that is not a live token of ours', async ({ env }) => {
    const smtp = await listener(env, { smtp: { messagesPerMinute: 1_000 } });
    const before = await stored(env);
    const statements = await statementsDuring(env, async () => {
      // What the finding sent: 30 messages of 1 MB to junkN@domain. Refused before DATA: no byte is read.
      const junk = Buffer.concat([rawMessage(), Buffer.from(`${'j'.repeat(998)}\r\n`.repeat(1_000))]);
      for (let n = 0; n < 30; n++) {
        const answer = await smtpSend(smtp.port, { from: 'x@spam.test', to: [`junk${n}@localhost`], raw: junk });
        expect(answer, `junk${n}`).toMatchObject({ ok: false, code: 550 });
        expect(answer.response).toContain('5.1.1');
      }
      // Guessed tokens: right shape but no mail of ours, wrong shape, a token in another domain's address.
      for (const to of [`reply+${newReplyToken()}@localhost`, `unsubscribe+${newReplyToken()}@localhost`, 'reply+abc@localhost']) {
        expect(await smtpSend(smtp.port, { from: 'x@spam.test', to: [to], raw: rawMessage() }), to).toMatchObject({ code: 550 });
      }
    });
    expect(await stored(env)).toBe(before);
    expect(statements.filter((sql) => /^\s*(insert|update|delete)\b/i.test(sql))).toEqual([]);
    // One indexed lookup per token-shaped recipient, none for the others.
    expect(statements.filter((sql) => sql.includes('mail_threads'))).toHaveLength(2);
  });

  it('takes a live reply+ and unsubscribe+ token (any case) and the bounce address; a deleted account’s tokens are refused', async ({
    env,
  }) => {
    const smtp = await listener(env);
    const { token, accountId } = await liveToken(env);
    // To the bounce address, the message itself must name the account: here its To: has the reply address.
    const raw = rawMessage({ to: `reply+${token}@localhost` });
    for (const to of [`reply+${token}@localhost`, `Unsubscribe+${token.toUpperCase()}@LOCALHOST`, BOUNCE]) {
      const answer = await smtpSend(smtp.port, { from: 'jane@acme.test', to: [to], raw });
      expect(answer, to).toMatchObject({ ok: true, code: 250 });
    }
    await removeRows(env, 'accounts', { id: accountId });
    const after = await smtpSend(smtp.port, { from: 'jane@acme.test', to: [`reply+${token}@localhost`], raw: rawMessage() });
    expect(after).toMatchObject({ ok: false, code: 550 });
  });

  it('closes a session that guesses too many recipients with 421', async ({ env }) => {
    const smtp = await listener(env, { smtp: { messagesPerMinute: 1_000 } });
    const s = await smtpDialog(smtp.port);
    try {
      await s.reply();
      await s.say('EHLO guesser.test');
      await s.say('MAIL FROM:<x@spam.test>');
      const answers: string[] = [];
      for (let i = 0; i < 12 && !s.closed; i++) answers.push(await s.say(`RCPT TO:<guess${i}@localhost>`));
      expect(answers.slice(0, 10).every((a) => a.startsWith('550 5.1.1'))).toBe(true);
      expect(answers.at(-1)).toMatch(/421 4\.7\.0 too many unknown recipients/);
      await until(async () => s.closed, 5_000);
    } finally {
      s.close();
    }
  });
});

describe('one client cannot take the door from others', () => {
  it('holds one client to its sessions (421) while another client still gets in', async ({ env }) => {
    // The finding: one client holding 100 idle sessions made every other sender get `421 Too many connected clients`.
    const smtp = await listener(env);
    const { sessionsPerIp, maxClients } = env.deps.config.inbound.smtp;
    expect(sessionsPerIp).toBeLessThan(maxClients);
    const held = await Promise.all(Array.from({ length: maxClients }, () => smtpDialog(smtp.port)));
    try {
      const greetings = await Promise.all(held.map((s) => s.reply()));
      expect(greetings.filter((g) => g.startsWith('220 '))).toHaveLength(sessionsPerIp);
      expect(greetings.filter((g) => g.startsWith('421 4.7.0 too many sessions from your address'))).toHaveLength(
        maxClients - sessionsPerIp,
      );
      const { token } = await liveToken(env);
      const other = await smtpSend(
        smtp.port,
        { from: 'jane@acme.test', to: [`reply+${token}@localhost`], raw: rawMessage() },
        OTHER_CLIENT,
      );
      expect(other).toMatchObject({ ok: true, code: 250 });
    } finally {
      for (const s of held) s.close();
    }
  });

  it('closes a session that starts no message within the idle time, however often it sends NOOP', async ({ env }) => {
    const smtp = await listener(env, { smtp: { idleMs: 400 } });
    const s = await smtpDialog(smtp.port);
    try {
      await s.reply();
      await s.say('EHLO idler.test');
      // The finding's client kept sessions open with a NOOP every 40 s; this one every 20 ms, far inside the idle
      // time, until the listener closes the session (a NOOP that restarted the idle clock would keep it open,
      // and the bounded wait below would fail naming it).
      const answers: string[] = [];
      await until(
        async () => {
          const answer = await s.say('NOOP');
          answers.push(answer);
          if (answer.startsWith('421')) return true;
          await new Promise((r) => setTimeout(r, 20));
          return false;
        },
        30_000,
        0,
      ).catch(() => {
        throw new Error(`the session answered ${answers.length} NOOPs and was never closed as idle`);
      });
      expect(answers.at(-1)).toMatch(/421 4\.4\.2 idle/);
      // It talked all along: every NOOP before the close was answered, none of them kept the session.
      expect(answers.slice(0, -1).every((a) => a.startsWith('250'))).toBe(true);
      expect(answers.length).toBeGreaterThan(1);
    } finally {
      s.close();
    }
  });

  it('answers 450 past a client’s messages per minute, and its bytes per hour; another client is untouched', async ({ env }) => {
    const smtp = await listener(env, { smtp: { messagesPerMinute: 3, bytesPerHour: 1_000_000 } });
    const { token } = await liveToken(env);
    const to = [`reply+${token}@localhost`];
    for (let i = 0; i < 3; i++) expect((await smtpSend(smtp.port, { from: 'a@acme.test', to, raw: rawMessage() })).code).toBe(250);
    const fourth = await smtpSend(smtp.port, { from: 'a@acme.test', to, raw: rawMessage() });
    expect(fourth).toMatchObject({ ok: false, code: 450 });
    expect(fourth.response).toContain('too many messages from your address');
    expect((await smtpSend(smtp.port, { from: 'a@acme.test', to, raw: rawMessage() }, OTHER_CLIENT)).code).toBe(250);

    const bytes = await listener(env, { smtp: { bytesPerHour: 20_000 } });
    const big = Buffer.concat([rawMessage(), Buffer.from(`${'b'.repeat(98)}\r\n`.repeat(90))]);
    const answers = [];
    for (let i = 0; i < 4; i++) answers.push((await smtpSend(bytes.port, { from: 'a@acme.test', to, raw: big })).code);
    // 2 × ~9.3 KB fit in 20,000 bytes; the third passes it mid-message (450), the fourth is refused at MAIL FROM.
    expect(answers).toEqual([250, 250, 450, 450]);
    expect((await smtpSend(bytes.port, { from: 'a@acme.test', to, raw: big }, OTHER_CLIENT)).code).toBe(250);
  });
});

describe('memory: the bytes received at once are bounded', () => {
  it('answers 452 4.3.1 to a message that would pass the in-flight budget while others are being received', async ({ env }) => {
    const BUDGET = 3.5 * 1024 * 1024;
    const smtp = await listener(env, { smtp: { inflightBytes: BUDGET, sessionsPerIp: 20, messagesPerMinute: 1_000 } });
    const { token } = await liveToken(env);
    const chunk = Buffer.from(`${'m'.repeat(1022)}\r\n`.repeat(1024)); // 1 MiB
    const open = async () => {
      const s = await smtpDialog(smtp.port);
      await s.reply();
      await s.say('EHLO big.test');
      expect(await s.say('MAIL FROM:<jane@acme.test>')).toMatch(/^250 /);
      expect(await s.say(`RCPT TO:<reply+${token}@localhost>`)).toMatch(/^250 /);
      expect(await s.say('DATA')).toMatch(/^354 /);
      await s.write(rawMessage());
      return s;
    };
    const a = await open();
    const b = await open();
    try {
      // Two messages of 1.5 MiB each are in flight: 3 MiB of the 3.5 MiB held.
      for (const s of [a, b]) {
        await s.write(chunk);
        await s.write(chunk.subarray(0, 512 * 1024));
      }
      await until(async () => smtp.inflightBytes() >= 3 * 1024 * 1024, 10_000);
      const c = await open();
      await c.write(chunk);
      expect(await c.data(Buffer.alloc(0))).toMatch(/^452 4\.3\.1 too much mail being received at once/);
      c.close();
      // The two held ones finish and are taken; the budget is free again.
      expect(await a.data(Buffer.alloc(0))).toMatch(/^250 /);
      expect(await b.data(Buffer.alloc(0))).toMatch(/^250 /);
      expect(smtp.inflightBytes()).toBe(0);
    } finally {
      a.close();
      b.close();
    }
  }, 30_000);

  it('takes some and refuses the rest (452) of eight concurrent 5 MB messages, storing exactly the ones it took', async ({ env }) => {
    const smtp = await listener(env, { smtp: { inflightBytes: 12 * 1024 * 1024, sessionsPerIp: 20, messagesPerMinute: 1_000 } });
    const { token } = await liveToken(env);
    const big = Buffer.concat([rawMessage(), Buffer.from(`${'q'.repeat(998)}\r\n`.repeat(5_000))]);
    const before = await stored(env);
    const answers = await Promise.all(
      Array.from({ length: 8 }, () => smtpSend(smtp.port, { from: 'jane@acme.test', to: [`reply+${token}@localhost`], raw: big })),
    );
    const taken = answers.filter((x) => x.code === 250);
    const refused = answers.filter((x) => x.code === 452);
    expect(taken.length + refused.length).toBe(8);
    expect(taken.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((x) => x.response.includes('4.3.1'))).toBe(true);
    expect((await stored(env)) - before).toBe(taken.length);
    expect(smtp.inflightBytes()).toBe(0);
  }, 60_000);
});

describe('a storage cap per account', () => {
  it('answers 452 4.2.2 at RCPT once the account keeps its cap of raw mail, and takes mail again once bytes are dropped', async ({
    env,
  }) => {
    const CAP = 3_000;
    const smtp = await listener(env, { accountStorageBytes: CAP });
    const { token, accountId } = await liveToken(env);
    const to = [`reply+${token}@localhost`];
    const raw = Buffer.concat([rawMessage(), Buffer.from(`${'s'.repeat(98)}\r\n`.repeat(30))]);
    const first = await smtpSend(smtp.port, { from: 'jane@acme.test', to, raw });
    expect(first.code).toBe(250);
    // Counted against the account once processing places it there.
    await processInbound(env.deps, idOf(first.response)!);
    const usage = await row(env, 'inbound_account_bytes', { account_id: accountId });
    expect(Number(usage.bytes)).toBe(raw.length);
    expect(raw.length).toBeGreaterThanOrEqual(CAP);
    const full = await smtpSend(smtp.port, { from: 'jane@acme.test', to, raw: rawMessage() });
    expect(full).toMatchObject({ ok: false, code: 452 });
    expect(full.response).toContain('4.2.2');
    // Its bytes dropped (retention), the account is under the cap again.
    await backdate(env, 'inbound_messages', { id: idOf(first.response)! }, { raw: null });
    expect(Number((await row(env, 'inbound_account_bytes', { account_id: accountId })).bytes)).toBe(0);
    expect((await smtpSend(smtp.port, { from: 'jane@acme.test', to, raw: rawMessage() })).code).toBe(250);
    expect((await inboundRepository(env.deps.db).find(idOf(first.response)!))?.status).toBe('applied');
  });
});

describe('per-client counters', () => {
  it('key IPv4 as is, an IPv4-mapped address as its IPv4, and IPv6 by its /64', () => {
    expect(clientKey('203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(clientKey('2001:db8:0:1::5')).toBe('2001:db8:0:1::/64');
    expect(clientKey('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
  });

  it('stay bounded: past the cap, addresses without a session are forgotten, the least recently seen first', () => {
    let t = 0;
    const limits = createClientLimits({ sessionsPerIp: 2, messagesPerMinute: 1, bytesPerHour: 10 }, () => t, 100);
    expect(limits.openSession('held')).toBe(true);
    for (let i = 0; i < 1_000; i++) limits.countMessage(`10.0.${i >> 8}.${i & 255}`);
    expect(limits.tracked).toBeLessThanOrEqual(100);
    // The one holding a session is never forgotten: its count stands.
    expect(limits.openSession('held')).toBe(true);
    expect(limits.openSession('held')).toBe(false);
    // Windows roll: a minute later the message budget is back, an hour later the bytes.
    limits.countMessage('c');
    expect(limits.mayStart('c')).toBe('messages');
    t += 60_000;
    expect(limits.mayStart('c')).toBe('ok');
    expect(limits.addBytes('c', 11)).toBe(false);
    expect(limits.mayStart('c')).toBe('bytes');
    t += 3_600_000;
    expect(limits.mayStart('c')).toBe('ok');
  });
});

describe('retention of raw mail', () => {
  it('drops raw bytes of unplaced, malformed and duplicate mail after 7 days, of applied mail after 30, in bounded batches', async ({
    env,
  }) => {
    const DAY = 24 * 60 * 60 * 1000;
    const now = Date.now();
    const repo = inboundRepository(env.deps.db);
    const raw = rawMessage();
    const { accountId } = await env.tenant();
    const make = async (status: string, ageDays: number) => {
      const id = await storeInbound(env.deps, { accountId, via: 'smtp', mailFrom: null, rcptTo: [BOUNCE], raw });
      await backdate(env, 'inbound_messages', { id }, { status, received_at: now - ageDays * DAY });
      return id;
    };
    const old = {
      unplaced: await make('unplaced', 8),
      malformed: await make('malformed', 8),
      duplicate: await make('duplicate', 8),
      applied: await make('applied', 31),
    };
    const kept = {
      unplaced: await make('unplaced', 6),
      applied: await make('applied', 20),
      received: await make('received', 60),
    };
    const hasRaw = async (id: string) => (await repo.withRaw(id))!.raw !== null;
    // A bounded sweep: at most one statement of 2 rows per window; the rest waits for the next sweep.
    const log = createLogger('silent');
    const only = ['inboundRaw', 'inboundAppliedRaw'];
    const rawDropped = async (o = {}) => {
      const { removed } = await runRetentionPass(env.deps, log, { now, only, ...o });
      return (removed.inboundRaw ?? 0) + (removed.inboundAppliedRaw ?? 0);
    };
    expect(await rawDropped({ batchRows: 2, passBatches: 1 })).toBe(3);
    expect(await rawDropped()).toBe(1);
    for (const id of Object.values(old)) expect(await hasRaw(id)).toBe(false);
    for (const id of Object.values(kept)) expect(await hasRaw(id)).toBe(true);
    // The row and what it was stay; only the bytes go.
    expect(await repo.find(old.applied)).toMatchObject({ status: 'applied', size: raw.length });
    expect(await rawDropped()).toBe(0);
  });
});

describe('matching reads a few tokens, in one query', () => {
  it('refuses a message to the bounce address whose To: names 15,000 unknown reply+ addresses, with one token query', async ({ env }) => {
    // The finding: a 795 KB message to the bounce address naming 15,000 reply+<random> in To: took 2.5 s of a worker.
    // Its account is looked for before it is stored (placement.ts): the first few tokens, in one query; none is ours.
    const strangers = Array.from({ length: 15_000 }, () => `reply+${newReplyToken()}@localhost`);
    const raw = rawMessage({ to: strangers.join(',\r\n ') });
    expect(raw.length).toBeGreaterThan(600_000);
    const smtp = await listener(env);
    const before = await stored(env);
    let answer: Awaited<ReturnType<typeof smtpSend>> | undefined;
    const statements = await statementsDuring(env, async () => {
      answer = await smtpSend(smtp.port, { from: 'jane@acme.test', to: [BOUNCE], raw });
    });
    expect(answer).toMatchObject({ ok: false, code: 550 });
    expect(statements.filter((sql) => sql.includes('reply_token'))).toHaveLength(1);
    expect(await stored(env)).toBe(before);
  }, 30_000);

  it('still finds a live token among the first few named, in the same one query', async ({ env }) => {
    const { token, accountId } = await liveToken(env);
    const strangers = Array.from({ length: 3 }, () => `reply+${newReplyToken()}@localhost`);
    const raw = rawMessage({ to: [...strangers, `reply+${token}@localhost`].join(', ') });
    const id = await storeInbound(env.deps, { accountId, via: 'smtp', mailFrom: null, rcptTo: [BOUNCE], raw });
    const statements = await statementsDuring(env, () => processInbound(env.deps, id));
    expect(statements.filter((sql) => sql.includes('reply_token'))).toHaveLength(1);
    expect(await inboundRepository(env.deps.db).find(id)).toMatchObject({ status: 'applied', details: { matchedBy: 'reply-address' } });
  });
});
