import { expect } from 'vitest';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { newId } from '../../src/ids.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { processInbound, UNPROVEN } from '../../src/inbound/process.service.js';
import { messageAccount } from '../../src/inbound/smtp-recipients.js';
import { getLead } from '../../src/leads/leads.service.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import { getResults } from '../helpers/scoreboard.js';
import { buildMailedLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { countRows, row, rows, wakesOf } from '../helpers/rows.js';

// processInbound end to end on a real database: parse → match → classify → settle + apply once.

const world = async (env: TestEnv) => buildMailedLead(env.deps.db, (await env.tenant()).accountId);

/**
 * Stores a message as intake does and returns its id: under the inbound URL's account, or (SMTP, to the bounce
 * address) under the account the message names, as the listener places it; throws when the listener refuses it.
 */
async function receive(env: TestEnv, raw: Buffer, opts: { accountId?: string; rcptTo?: string[] } = {}): Promise<string> {
  let accountId = opts.accountId;
  if (!accountId) {
    const placed = await messageAccount(env.deps, [], raw, opts.rcptTo ?? []);
    if (!placed.ok) throw new Error(`refused: ${placed.error.message}`);
    accountId = placed.accountId;
  }
  const id = newId('im');
  await inboundRepository(env.deps.db).insert({
    id,
    accountId,
    via: opts.accountId ? 'http' : 'smtp',
    mailFrom: null,
    rcptTo: opts.rcptTo ?? [],
    raw,
    receivedAt: Date.now(),
  });
  return id;
}

async function processed(env: TestEnv, raw: Buffer, opts: Parameters<typeof receive>[2] = {}) {
  const id = await receive(env, raw, opts);
  await processInbound(env.deps, id);
  const found = await inboundRepository(env.deps.db).find(id);
  if (!found) throw new Error('row gone');
  return found;
}

async function emailWindow(env: TestEnv, accountId: string) {
  const r = await getResults(env.deps.db, accountId, undefined);
  if (!r.email.available) throw new Error('email not available');
  return r.email.data.window as Record<string, unknown>;
}

/** The account's email events by type (what `/results` counts). */
async function events(env: TestEnv, accountId: string): Promise<Record<string, number>> {
  const counted: { type: string; n: string }[] = await rows(env, 'channel_events', { account_id: accountId, channel: 'email' })
    .groupBy('type')
    .select('type', env.deps.db.raw('count(*) AS n'));
  return Object.fromEntries(counted.map((r) => [r.type, Number(r.n)]));
}

const wakes = async (env: TestEnv, accountId: string) => (await wakesOf(env, accountId)).length;
const fixture = (name: string, thread: Thread) => mailFixture(name, thread);

it('applies a Gmail reply: lead replied (interested), counted, the agent woken, the row settled with how it matched', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  const found = await processed(env, fixture('gmail-reply', thread));
  expect(found).toMatchObject({
    status: 'applied',
    accountId,
    kind: 'reply',
    replyKind: 'interested',
    sendId: thread.sendId,
    leadId,
    headerMessageId: '<CAJx9Lr7f0PqZ3kV1m2Jd8yWq4Hc5uT0bN6s+Qp_2vXw@mail.gmail.com>',
    details: { matchedBy: 'reply-address', rule: 'human; wants-to-talk' },
  });
  expect(await getLead(env.deps.db, accountId, leadId)).toMatchObject({ status: 'replied', replyKind: 'interested' });
  expect(await emailWindow(env, accountId)).toMatchObject({ replies: 1 });
  const [wake] = await wakesOf(env, accountId);
  // The agent reads the new text only, never our quoted mail.
  expect(wake.data.content.text).toContain('set up a call');
  expect(wake.data.content.text).not.toContain('not interested');
});

it('matches a reply with no reply address by In-Reply-To, and a declining one keeps our reason', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  const html = await processed(env, fixture('html-only-reply', thread));
  expect(html).toMatchObject({ status: 'applied', replyKind: 'question', details: { matchedBy: 'in-reply-to' } });
  const b = await world(env);
  const outlook = await processed(env, fixture('outlook-reply', b.thread));
  expect(outlook).toMatchObject({ status: 'applied', replyKind: 'not_now', details: { declineReason: 'no budget at the moment' } });
  expect(await getLead(env.deps.db, b.accountId, b.leadId)).toMatchObject({
    replyKind: 'not_now',
    declineReason: 'no budget at the moment',
  });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('replied');
});

it('applies a Postfix hard bounce found by the original in the report: lead bounced, address blocked', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  const found = await processed(env, fixture('postfix-dsn-hard', thread));
  expect(found).toMatchObject({
    status: 'applied',
    kind: 'bounce',
    details: { matchedBy: 'original-message-id', bounce: { type: 'hard', status: '5.1.1', recipient: 'jane@acme.test' } },
  });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('bounced');
  expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(true);
  expect(await emailWindow(env, accountId)).toMatchObject({ bounces: 1 });
});

it('finds a qmail bounce (no report parts) by the original copied into its text', async ({ env }) => {
  const { accountId, thread } = await world(env);
  expect(await processed(env, fixture('qmail-bounce', thread))).toMatchObject({
    status: 'applied',
    kind: 'bounce',
    details: { matchedBy: 'original-message-id', rule: 'mailer-daemon-status-code' },
  });
  expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(true);
});

it('keeps a soft bounce and an out-of-office without changing the lead, stopping nothing, waking nobody', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  expect(await processed(env, fixture('postfix-dsn-delayed', thread))).toMatchObject({ status: 'applied', kind: 'bounce' });
  expect(await processed(env, fixture('outlook-auto-reply', thread))).toMatchObject({ status: 'applied', kind: 'auto_reply' });
  expect(await processed(env, fixture('gmail-vacation', thread))).toMatchObject({ status: 'applied', kind: 'auto_reply' });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('contacted');
  expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
  expect(await wakes(env, accountId)).toBe(0);
});

it('opts the address out for an unsubscribe by reply, by the unsubscribe+ mailto, and for an ARF complaint', async ({ env }) => {
  for (const [name, kind] of [
    ['unsubscribe-reply', 'reply'],
    ['unsubscribe-mailto', 'unsubscribe'],
    ['arf-complaint', 'complaint'],
  ] as const) {
    const { accountId, leadId, thread } = await world(env);
    expect(await processed(env, fixture(name, thread)), name).toMatchObject({ status: 'applied', kind });
    expect((await getLead(env.deps.db, accountId, leadId)).status, name).toBe('unsubscribed');
    const entry = await row(env, 'blocklist_entries', { account_id: accountId, value: 'jane@acme.test' });
    expect(entry, name).toMatchObject({ source: 'opt_out_reply' });
    expect(await wakes(env, accountId), name).toBe(0);
  }
});

it('refuses a reply to an unknown reply+ address before storing it: it names no account', async ({ env }) => {
  const raw = mailFixture('thunderbird-reply', { replyToken: 'NoSuchToken123', messageId: '<nobody@localhost>' });
  const before = await countRows(env, 'inbound_messages');
  await expect(receive(env, raw)).rejects.toThrow(/refused: 5\.7\.1 this message answers no mail of ours/);
  expect(await countRows(env, 'inbound_messages')).toBe(before);
});

it("refuses a message that came in on account A's inbound URL but claims B's send, and leaves B untouched", async ({ env }) => {
  const a = await world(env);
  const b = await world(env);
  const found = await processed(env, fixture('gmail-reply', b.thread), { accountId: a.accountId });
  expect(found).toMatchObject({ status: 'unplaced', reason: 'claims a send of another account', accountId: a.accountId, sendId: null });
  expect((await getLead(env.deps.db, b.accountId, b.leadId)).status).toBe('contacted');
  expect(await events(env, b.accountId)).toEqual({});
  expect(await wakes(env, b.accountId)).toBe(0);
  // The same by thread headers only, and by a bounce's original.
  const html = await processed(env, fixture('html-only-reply', b.thread), { accountId: a.accountId });
  expect(html).toMatchObject({ status: 'unplaced', reason: 'claims a send of another account' });
  const bounce = await processed(env, fixture('postfix-dsn-hard', b.thread), { accountId: a.accountId });
  expect(bounce).toMatchObject({ status: 'unplaced', reason: 'claims a send of another account' });
  expect(await isBlocked(env.deps.db, b.accountId, 'jane@acme.test')).toBe(false);
});

it('matches by sender within its account; by SMTP a sender two accounts mailed is refused; unproven, it only wakes', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  await world(env); // A second account mailed the same address.
  const bare = fixture('html-only-reply', thread)
    .toString('latin1')
    .replace(/^(In-Reply-To|References): .*\r\n/gm, '');
  await expect(receive(env, Buffer.from(bare, 'latin1'))).rejects.toThrow(/refused/);
  expect(await processed(env, Buffer.from(bare, 'latin1'), { accountId })).toMatchObject({
    status: 'applied',
    sendId: thread.sendId,
    details: { matchedBy: 'sender', proof: 'none', senderAuth: { pass: false, reason: 'no trusted authserv-id is configured' } },
  });
  // Its From proves nothing: the lead, its counts and its sequences stay; a person sees it through the agent.
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('contacted');
  expect(await events(env, accountId)).toEqual({});
  expect(await wakes(env, accountId)).toBe(1);
  // A bounce or automatic reply matched so changes nothing and is kept aside.
  const ooo = fixture('outlook-auto-reply', thread)
    .toString('latin1')
    .replace(/^(In-Reply-To|References): .*\r\n/gm, '');
  expect(await processed(env, Buffer.from(ooo, 'latin1'), { accountId })).toMatchObject({
    status: 'unplaced',
    reason: UNPROVEN,
    kind: 'auto_reply',
  });
});

it('keeps malformed MIME with its reason, and never throws', async ({ env }) => {
  // Stored under the account its envelope token named (the listener does not parse such mail before storing it).
  const { accountId, thread } = await world(env);
  const rcptTo = [`reply+${thread.replyToken}@localhost`];
  expect(await processed(env, fixture('malformed-mime', thread), { accountId, rcptTo })).toMatchObject({
    status: 'malformed',
    reason: 'the multipart body never uses its declared boundary',
  });
  expect(await processed(env, Buffer.from('garbage without any header'), { accountId, rcptTo })).toMatchObject({ status: 'malformed' });
});

it("settles a provider's repeat of an applied message (same account, same Message-ID) as duplicate", async ({ env }) => {
  const { accountId, thread } = await world(env);
  const raw = fixture('gmail-reply', thread);
  expect(await processed(env, raw)).toMatchObject({ status: 'applied' });
  const again = await processed(env, raw, { accountId });
  expect(again).toMatchObject({ status: 'duplicate', sendId: thread.sendId });
  expect(again.reason).toMatch(/^the same message \(Message-ID\) was applied as im_/);
  expect(await wakes(env, accountId)).toBe(1);
});

it('applies a message once when its job runs twice, one after the other or at the same time', async ({ env }) => {
  const { accountId, thread } = await world(env);
  const id = await receive(env, fixture('apple-mail-reply', thread));
  await processInbound(env.deps, id);
  const first = await inboundRepository(env.deps.db).find(id);
  await processInbound(env.deps, id);
  expect(await inboundRepository(env.deps.db).find(id)).toEqual(first);
  expect(first).toMatchObject({ status: 'applied', replyKind: 'referral' });

  const b = await world(env);
  const both = await receive(env, fixture('gmail-reply', b.thread));
  await Promise.all([processInbound(env.deps, both), processInbound(env.deps, both)]);
  expect(await inboundRepository(env.deps.db).find(both)).toMatchObject({ status: 'applied' });
  expect(await wakes(env, b.accountId)).toBe(1);
  expect(await events(env, b.accountId)).toEqual({ reply: 1, positive_reply: 1 });
  expect(await wakes(env, accountId)).toBe(1);
});

it('does nothing for an id that is not stored', async ({ env }) => {
  await expect(processInbound(env.deps, 'im_missing')).resolves.toBeUndefined();
});

it('applies messages processed together (shared transactions) as one by one: a repeat, one lead twice, each account its own', async ({
  env,
}) => {
  const worlds = await Promise.all(Array.from({ length: 12 }, () => world(env)));
  const ids: string[] = [];
  for (const w of worlds) ids.push(await receive(env, fixture('gmail-reply', w.thread)));
  // Two copies of one message (a provider's repeat) and two replies from one lead, in flight together.
  const twice = worlds[0]!;
  ids.push(await receive(env, fixture('gmail-reply', twice.thread), { accountId: twice.accountId }));
  const lead = worlds[1]!;
  ids.push(await receive(env, fixture('postfix-dsn-hard', lead.thread)));
  await Promise.all(ids.map((id) => processInbound(env.deps, id)));

  const foundRows = await Promise.all(ids.map((id) => inboundRepository(env.deps.db).find(id)));
  const statuses = foundRows.map((r) => r!.status);
  expect(statuses.filter((s) => s === 'applied')).toHaveLength(13);
  expect(statuses.filter((s) => s === 'duplicate')).toHaveLength(1);
  for (const w of worlds) {
    expect(await events(env, w.accountId), w.accountId).toMatchObject({ reply: 1, positive_reply: 1 });
    expect(await wakes(env, w.accountId)).toBe(1);
  }
  // The lead that replied and then bounced stays replied (a reply proves the address worked), whichever came first.
  expect(await getLead(env.deps.db, lead.accountId, lead.leadId)).toMatchObject({ status: 'replied', replyKind: 'interested' });
  expect(await isBlocked(env.deps.db, lead.accountId, 'jane@acme.test')).toBe(true);
});
