import { afterAll, describe, expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { clientKey, networkKey } from '../../src/inbound/smtp-limits.js';
import { createSessionSlots } from '../../src/inbound/smtp-slots.js';
import { newReplyToken } from '../../src/mail/outbound.js';
import { buildThread } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { rawMessage, smtpDialog, smtpSend } from '../helpers/smtp-client.js';
import { countRows } from '../helpers/rows.js';

// The inbound SMTP door stays open to new networks, and no session outlives its clocks. Every network is a
// loopback address in its own /24 (all of 127.0.0.0/8 is loopback on Linux): the client socket binds it.

const listeners: InboundSmtp[] = [];
type Dialog = Awaited<ReturnType<typeof smtpDialog>>;
const dialogs: Dialog[] = [];

afterAll(async () => {
  for (const d of dialogs) d.close();
  for (const l of listeners) await l.close();
});

type Smtp = Config['inbound']['smtp'];
async function listener(env: TestEnv, smtp: Partial<Smtp> = {}): Promise<InboundSmtp> {
  const base = env.deps.config.inbound;
  const inbound = { ...base, smtp: { ...base.smtp, ...smtp } };
  const l = await startInboundSmtp({ ...env.deps, config: { ...env.deps.config, inbound } }, { port: 0, host: '127.0.0.1' });
  listeners.push(l);
  return l;
}

/** `n` sessions opened at once from `address`: the greeting each got. */
async function open(port: number, address: string, n: number): Promise<string[]> {
  const opened = await Promise.all(Array.from({ length: n }, () => smtpDialog(port, address)));
  dialogs.push(...opened);
  return Promise.all(opened.map((d) => d.reply()));
}
const count = (greetings: string[], prefix: string) => greetings.filter((g) => g.startsWith(prefix)).length;

async function liveToken(env: TestEnv): Promise<string> {
  const { accountId } = await env.tenant();
  const token = newReplyToken();
  await buildThread(env.deps.db, accountId, { sendId: `send_${token}`, cardId: `card_${token}`, replyToken: token });
  return token;
}

describe('networks', () => {
  it('groups IPv4 by /24 and IPv6 by /48 (each address of it by /64), an IPv4-mapped address as its IPv4', () => {
    expect(networkKey('203.0.113.9')).toBe('203.0.113.0/24');
    expect(networkKey('::ffff:203.0.113.200')).toBe('203.0.113.0/24');
    expect(networkKey('203.0.114.9')).toBe('203.0.114.0/24');
    // Two /64s of one site's /48: two clients, one network.
    const a = '2001:db8:1:2::5';
    const b = '2001:0DB8:0001:ffff:1:2:3:4';
    expect(clientKey(a)).not.toBe(clientKey(b));
    expect(networkKey(a)).toBe('2001:db8:1::/48');
    expect(networkKey(b)).toBe('2001:db8:1::/48');
    expect(networkKey('2001:db8:2::1')).toBe('2001:db8:2::/48');
    expect(networkKey('::1')).toBe('0:0:0::/48');
  });

  it('count an IPv6 /48 as one network: its /64s share the network cap, and the reserve waits for others', () => {
    const slots = createSessionSlots({ maxClients: 6, sessionsPerNetwork: 3, reservedSlots: 2 });
    const site = (n: number) => networkKey(`2001:db8:7:${n}::1`);
    for (let n = 1; n <= 3; n++) {
      expect(slots.refusal(site(n))).toBeNull();
      slots.take(site(n));
    }
    expect(slots.refusal(site(4))).toBe('network');
    const other = networkKey('2001:db8:8::1');
    expect(slots.refusal(other)).toBeNull();
    slots.take(other);
    // 4 of 6 held: the last 2 are kept for networks holding none.
    expect(slots.refusal(other)).toBe('reserved');
    expect(slots.refusal(networkKey('2001:db9::1'))).toBeNull();
    slots.release(site(1));
    expect(slots.refusal(site(1))).toBeNull();
  });
});

describe('the listener stays open to new networks', () => {
  it('lets an 11th network in while 10 networks hold their caps and a hog tries for every slot left', async ({ env }) => {
    // The finding: 10 addresses × 10 sessions held all 100 slots and every other sender got 421.
    const smtp = await listener(env, {
      maxClients: 100,
      sessionsPerIp: 4,
      sessionsPerNetwork: 8,
      reservedSlots: 20,
      messagesPerMinute: 1_000,
    });
    for (let n = 1; n <= 10; n++) {
      // Each network from two addresses, 10 sessions tried: 8 taken (its cap), 2 refused.
      const greetings = [...(await open(smtp.port, `127.0.${n}.1`, 5)), ...(await open(smtp.port, `127.0.${n}.2`, 5))];
      expect(count(greetings, '220 '), `network ${n}`).toBe(8);
      expect(
        count(greetings, '421 4.7.0 too many sessions from your address') +
          count(greetings, '421 4.7.0 too many sessions from your network'),
      ).toBe(2);
    }
    // 80 held. The hog: a third address in a full network, then its connected networks' every try.
    expect(await open(smtp.port, '127.0.1.3', 3)).toEqual(
      Array(3).fill(expect.stringMatching(/^421 4\.7\.0 too many sessions from your network/)),
    );
    // New networks of the hog get one reserved slot each and no second one.
    for (let n = 1; n <= 5; n++) {
      const greetings = await open(smtp.port, `127.2.${n}.1`, 4);
      expect(count(greetings, '220 ')).toBe(1);
      expect(count(greetings, '421 4.7.0 the sessions left are kept for other networks')).toBe(3);
    }
    // Nothing else: every refusal of the hog was one of the documented 421s.
    const eleventh = await liveTokenSend(env, smtp.port, '127.1.0.1');
    expect(eleventh).toMatchObject({ ok: true, code: 250 });
  }, 60_000);

  it('holds an address to its cap and a /24 to its cap; another /24 still gets in', async ({ env }) => {
    const smtp = await listener(env, { sessionsPerIp: 2, sessionsPerNetwork: 3 });
    const first = await open(smtp.port, '127.0.5.1', 3);
    expect(count(first, '220 ')).toBe(2);
    expect(count(first, '421 4.7.0 too many sessions from your address; try again later')).toBe(1);
    const second = await open(smtp.port, '127.0.5.2', 2);
    expect(count(second, '220 ')).toBe(1);
    expect(count(second, '421 4.7.0 too many sessions from your network; try again later')).toBe(1);
    expect(await open(smtp.port, '127.0.6.1', 2)).toEqual(Array(2).fill(expect.stringMatching(/^220 /)));
  });

  it('answers 421 past the listener’s own cap, even to a new network, once its reserve is taken', async ({ env }) => {
    const smtp = await listener(env, { maxClients: 3, sessionsPerNetwork: 3, reservedSlots: 1 });
    expect(count(await open(smtp.port, '127.0.7.1', 3), '220 ')).toBe(2);
    expect(count(await open(smtp.port, '127.0.8.1', 1), '220 ')).toBe(1);
    expect(await open(smtp.port, '127.0.9.1', 1)).toEqual([expect.stringMatching(/^421 4\.3\.2 too many sessions at once/)]);
  });
});

async function liveTokenSend(env: TestEnv, port: number, from: string) {
  const token = await liveToken(env);
  return smtpSend(port, { from: 'jane@acme.test', to: [`reply+${token}@localhost`], raw: rawMessage() }, from);
}

/** A session in DATA to a live token, from `address`. */
async function inData(env: TestEnv, port: number, address: string): Promise<Dialog> {
  const token = await liveToken(env);
  const s = await smtpDialog(port, address);
  dialogs.push(s);
  expect(await s.reply()).toMatch(/^220 /);
  await s.say('EHLO drip.test');
  expect(await s.say('MAIL FROM:<jane@acme.test>')).toMatch(/^250 /);
  expect(await s.say(`RCPT TO:<reply+${token}@localhost>`)).toMatch(/^250 /);
  expect(await s.say('DATA')).toMatch(/^354 /);
  return s;
}

/** Writes a byte every `everyMs` until the server closes the session (at most `max` bytes): the client's drip. */
async function drip(s: Dialog, everyMs: number, max: number): Promise<void> {
  for (let i = 0; i < max && !s.closed; i++) {
    await s.write('x');
    // The client's pace is what is under test, not a wait for something to happen.
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

describe('clocks reading does not reset', () => {
  it('closes a DATA drip slower than the minimum rate with 421, nothing stored, nothing held', async ({ env }) => {
    // The finding: one byte every 20 s kept a session in DATA for ever (each byte reset the socket timer).
    const smtp = await listener(env, { dataMinBytes: 64, dataWindowMs: 1_000 });
    const before = await countRows(env, 'inbound_messages');
    const s = await inData(env, smtp.port, '127.0.10.1');
    const answer = s.reply();
    await drip(s, 100, 200);
    await until(async () => s.closed, 20_000);
    expect(await answer).toMatch(/^421 4\.4\.2 message data arriving too slowly, closing/);
    expect(smtp.inflightBytes()).toBe(0);
    expect(await countRows(env, 'inbound_messages')).toBe(before);
  }, 30_000);

  it('closes a message still in DATA past its lifetime, however fast its bytes come', async ({ env }) => {
    const smtp = await listener(env, { dataMs: 800, dataMinBytes: 1, dataWindowMs: 60_000 });
    const s = await inData(env, smtp.port, '127.0.11.1');
    const answer = s.reply();
    await drip(s, 20, 1_000);
    await until(async () => s.closed, 20_000);
    expect(await answer).toMatch(/^421 4\.4\.2 message took too long to send, closing/);
  }, 30_000);

  it('closes a session past its lifetime, whatever it keeps sending', async ({ env }) => {
    const smtp = await listener(env, { sessionMs: 600, idleMs: 60_000 });
    const s = await smtpDialog(smtp.port, '127.0.12.1');
    dialogs.push(s);
    await s.reply();
    let last = '';
    // Commands that keep the socket busy, one every 10 ms: at most 1,000 of them.
    for (let i = 0; i < 1_000 && !s.closed && !last.startsWith('421'); i++) {
      last = await s.say(i % 2 ? 'MAIL FROM:<a@acme.test>' : 'RSET');
      // The client's pace (under test), not a wait.
      await new Promise((r) => setTimeout(r, 10));
    }
    // Closed between two commands: its 421 is the reply still to be read.
    if (!last.startsWith('421')) last = await s.reply();
    expect(last).toMatch(/^421 4\.4\.2 session lasted too long, closing/);
    await until(async () => s.closed, 5_000);
  }, 30_000);
});
