import { expect } from 'vitest';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { applyOutcome } from '../../src/inbound/effects.service.js';
import type { Outcome } from '../../src/inbound/inbound.types.js';
import { getLead } from '../../src/leads/leads.service.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import { getResults } from '../helpers/scoreboard.js';
import { buildMailedLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { activeSequence } from '../helpers/inbound-mail.js';
import { row, rows } from '../helpers/rows.js';

// applyOutcome: what one reply, bounce or unsubscribe changes, in the caller's transaction.

const world = async (env: TestEnv) => buildMailedLead(env.deps.db, (await env.tenant()).accountId);

const apply = (env: TestEnv, thread: Thread, outcome: Outcome, id = `im_${Math.random()}`) =>
  env.deps.db.transaction((trx) => applyOutcome(trx, env.deps.config, thread, outcome, { id, at: Date.now() }));

async function sequenceFor(env: TestEnv, accountId: string, to: string, leadId: string | null) {
  const id = await activeSequence(env, accountId, leadId, to, 1000);
  return async () => (await row(env, 'mail_sequences', { id })) as { status: string; stop_reason: string | null };
}

async function emailWindow(env: TestEnv, accountId: string) {
  const r = await getResults(env.deps.db, accountId, undefined);
  if (!r.email.available) throw new Error('email not available');
  return r.email.data.window as Record<string, unknown>;
}

it('a human reply marks the lead replied with its kind, stops the sequence, counts once, and records a wake turn', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  const seq = await sequenceFor(env, accountId, 'jane@acme.test', leadId);
  const outcome: Outcome = { kind: 'reply', replyKind: 'interested', subject: 'Re: Quick idea', text: 'Sounds good, call me.' };
  const applied = await apply(env, thread, outcome);
  expect(applied.leadChanged).toBe(leadId);
  expect(applied.sequencesStopped).toBe(1);
  expect(applied.wake?.turn.kind).toBe('wake');
  expect(applied.wake?.turn.data).toMatchObject({ label: 'mail reply', content: { sendId: thread.sendId, replyKind: 'interested' } });
  const lead = await getLead(env.deps.db, accountId, leadId);
  expect(lead).toMatchObject({ status: 'replied', replyKind: 'interested', declineReason: null });
  expect(await seq()).toMatchObject({ status: 'stopped', stop_reason: 'the recipient replied' });
  // A second reply in the same thread wakes the agent again but counts as one reply of this send.
  await apply(env, thread, outcome);
  const w = await emailWindow(env, accountId);
  expect(w.replies).toBe(1);
  expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
});

it('an automatic reply changes nothing: no status, no stop, no wake', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  const seq = await sequenceFor(env, accountId, 'jane@acme.test', leadId);
  const applied = await apply(env, thread, { kind: 'auto_reply' });
  expect(applied).toEqual({ leadChanged: null, sequencesStopped: 0, blocked: false, wake: null });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('contacted');
  expect((await seq()).status).toBe('active');
});

it('a hard bounce blocks the address (removable), marks the lead bounced, stops the sequence; a soft one counts as delayed', async ({
  env,
}) => {
  const { accountId, leadId, thread } = await world(env);
  const seq = await sequenceFor(env, accountId, 'jane@acme.test', leadId);
  const soft = await apply(env, thread, {
    kind: 'bounce',
    bounce: { type: 'soft', recipient: 'jane@acme.test', status: '4.4.1', diagnostic: null },
  });
  expect(soft.blocked).toBe(false);
  expect((await seq()).status).toBe('active');
  expect(await emailWindow(env, accountId)).toMatchObject({ delayed: 1, bounces: 0 });
  // A second warning about the same send counts once.
  await apply(env, thread, { kind: 'bounce', bounce: { type: 'soft', recipient: 'jane@acme.test', status: '4.4.1', diagnostic: null } });
  expect(await emailWindow(env, accountId)).toMatchObject({ delayed: 1, bounces: 0 });
  const hard = await apply(env, thread, {
    kind: 'bounce',
    bounce: { type: 'hard', recipient: 'jane@acme.test', status: '5.1.1', diagnostic: 'user unknown' },
  });
  expect(hard).toMatchObject({ blocked: true, sequencesStopped: 1, wake: null });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('bounced');
  expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(true);
  const entry = await row(env, 'blocklist_entries', { account_id: accountId, value: 'jane@acme.test' });
  expect(entry).toMatchObject({ source: 'agent' });
  expect(entry.reason).toContain('5.1.1');
  expect((await emailWindow(env, accountId)).bounces).toBe(1);
});

it('an unsubscribe (or a complaint) opts the address out for good and outranks a later reply', async ({ env }) => {
  const { accountId, leadId, thread } = await world(env);
  await apply(env, thread, { kind: 'unsubscribe' }, 'one-click');
  await apply(env, thread, { kind: 'complaint' }, 'arf');
  const entry = await row(env, 'blocklist_entries', { account_id: accountId, value: 'jane@acme.test' });
  expect(entry).toMatchObject({ source: 'opt_out_reply' });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('unsubscribed');
  await apply(env, thread, { kind: 'reply', replyKind: 'question', text: 'wait, one question' });
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('unsubscribed');
  // Counted once per send, however many ways it arrived.
  expect((await emailWindow(env, accountId)).optOuts ?? (await emailWindow(env, accountId)).unsubscribes).toBe(1);
});

it("a reply asking to be removed is an opt-out, not a wake; another account's lead is never touched", async ({ env }) => {
  const a = await world(env);
  const b = await world(env);
  const applied = await apply(env, a.thread, { kind: 'reply', replyKind: 'unsubscribe', text: 'Please remove me from your list.' });
  expect(applied).toMatchObject({ blocked: true, wake: null });
  expect(await getLead(env.deps.db, a.accountId, a.leadId)).toMatchObject({ status: 'unsubscribed', replyKind: 'unsubscribe' });
  expect((await getLead(env.deps.db, b.accountId, b.leadId)).status).toBe('contacted');
  expect(await isBlocked(env.deps.db, b.accountId, 'jane@acme.test')).toBe(false);
});

it('an unverified outcome changes no lead, count, sequence or block list; an unverified reply only wakes the agent, marked', async ({
  env,
}) => {
  const { accountId, leadId, thread } = await world(env);
  const seq = await sequenceFor(env, accountId, 'jane@acme.test', leadId);
  const hard = { type: 'hard', recipient: 'jane@acme.test', status: '5.1.1', diagnostic: 'user unknown' } as const;
  for (const outcome of [
    { kind: 'bounce', bounce: hard },
    { kind: 'complaint' },
    { kind: 'unsubscribe' },
    { kind: 'auto_reply' },
  ] satisfies Outcome[]) {
    const applied = await apply(env, thread, { ...outcome, unverified: true });
    expect(applied, outcome.kind).toEqual({ leadChanged: null, sequencesStopped: 0, blocked: false, wake: null });
  }
  const reply = await apply(env, thread, {
    kind: 'reply',
    replyKind: 'unsubscribe',
    subject: 'Re: Quick idea',
    text: 'Please remove me from your list.',
    unverified: true,
  });
  expect(reply).toMatchObject({ leadChanged: null, sequencesStopped: 0, blocked: false });
  expect(reply.wake?.turn.data).toMatchObject({ label: 'mail reply', content: { verified: false, replyKind: 'unsubscribe' } });
  expect(reply.wake?.turn.text).toContain('Unverified');
  expect((await getLead(env.deps.db, accountId, leadId)).status).toBe('contacted');
  expect((await seq()).status).toBe('active');
  expect(await isBlocked(env.deps.db, accountId, 'jane@acme.test')).toBe(false);
  expect(await rows(env, 'channel_events', { account_id: accountId })).toEqual([]);
});
