import { afterAll, describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { pollProviderEvents } from '../../src/inbound/network-replies.service.js';
import { providerPoll } from '../../src/jobs/provider-polls.js';
import { enqueue } from '../../src/jobs/registry.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { sequenceIdFor } from '../../src/mail/sequences.repository.js';
import { memoryNotesRepository } from '../../src/memory/memory-notes.repository.js';
import { shipSequenceStep } from '../../src/shipping/sequence-runner.js';
import { buildCard } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { BRIDGE_SHIP_ENV, connectedTenant, startProviderBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { leadRow, row, rows, sequenceOfCard } from '../helpers/rows.js';
import { backdate, overwrite } from '../helpers/row-setup.js';
import { approveCard } from '../helpers/approve.js';

/**
 * A reply on the professional network acts as a mail reply does, end to end through the
 * provider bridge stand-in: a network message ships, the bridge reports the answer, the `provider.poll`
 * job on the provider-polls pool reads it; the lead becomes replied, its running mail sequence stops, and
 * the agent (agent-turns pool, offline brain) wakes with the reply as outside data and drafts an answer
 * for a person. A reply seen again, or read by two polls at once, is applied once.
 */
/** One bridge per account, as in production: its events are that account's. */
const bridges: ProviderBridgeStandIn[] = [];
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), ...BRIDGE_SHIP_ENV },
  pools: ['agent-turns', 'shipments', 'inbound-mail', 'provider-polls'],
}));
afterAll(async () => {
  for (const b of bridges) await b.close();
});

const ANN = 'https://www.linkedin.com/in/ann-lee';
const ANN_MAIL = 'ann@lee.test';
const NOTE = 'Our floor price is forty thousand a year and we never mention the partner discount ladder';

async function approve(env: TestEnv, token: string, cardId: string) {
  const res = await approveCard(env, token, cardId);
  expect(res.status).toBe(200);
}

/** An account connected to the bridge, with Ann as a lead (mail and profile), a running mail sequence to her and a network message sent. */
async function world(env: TestEnv) {
  const bridge = await startProviderBridge();
  bridges.push(bridge);
  const { accountId, token } = await connectedTenant(env, bridge, 'network');
  await memoryNotesRepository(env.deps.db).remember(accountId, NOTE, null, Date.now());
  const lead = await upsertLead(env.deps.db, accountId, {
    domain: 'lee.test',
    contacts: [{ name: 'Ann Lee', email: ANN_MAIL, profileUrl: 'linkedin.com/in/Ann-Lee/' }],
  });
  const seqCard = await buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'sequence',
    title: `Sequence to ${ANN_MAIL}`,
    payload: {
      work: 'sequence',
      to: ANN_MAIL,
      draft: { subject: 'Onboarding', body: 'first' },
      steps: [{ body: 'second', delayDays: 3 }],
    },
  });
  await approve(env, token, seqCard.id);
  const message = await buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'network_message',
    title: 'Say hello to Ann',
    payload: { work: 'network_message', to: ANN, draft: { body: 'Hello Ann' } },
  });
  await approve(env, token, message.id);
  expect(bridge.shipments.filter((s) => s.body.to === ANN)).toHaveLength(1);
  const sequence = () => row(env, 'mail_sequences', { id: sequenceIdFor(seqCard.id) });
  expect(await sequence()).toMatchObject({ status: 'active', lead_id: lead.id, next_step: 1 });
  return { bridge, accountId, token, leadId: lead.id, seqCard, message, sequence };
}

/**
 * Runs the real poll job for the account and waits for it to finish: what it read and applied. A job the
 * minute's sweep queued for this account (an enqueue while it waits joins it) may have read the bridge
 * before the event arrived: then it polls again, until a job reads something.
 */
async function pollJob(env: TestEnv, accountId: string) {
  const queue = env.deps.queues.get(providerPoll.queue)!;
  let result = { events: 0, applied: 0 };
  for (let tries = 0; tries < 3 && result.events === 0; tries++) {
    const id = await enqueue(env.deps.queues, providerPoll, { accountId, kind: 'network' });
    await until(async () => (await queue.getJobState(id)) === 'completed', 20_000);
    result = (await queue.getJob(id))!.returnvalue as typeof result;
  }
  return result;
}

const wakes = (env: TestEnv, accountId: string) => rows(env, 'agent_turns', { account_id: accountId, kind: 'wake' }).orderBy('created_at');
const replies = (env: TestEnv, accountId: string) =>
  rows(env, 'channel_events', { account_id: accountId, channel: 'network', type: 'reply' });
const networkCards = (env: TestEnv, accountId: string) =>
  rows(env, 'review_cards', { account_id: accountId, source_type: 'network_message' }).orderBy('created_at');

describe('a reply on the professional network', () => {
  it('makes the lead replied, stops its mail sequence, wakes the agent once; a duplicate event changes nothing', async ({ env, smtp }) => {
    const w = await world(env);
    const text = 'Sounds interesting, can we talk next week?';
    w.bridge.events.push({ id: `reply-${w.accountId}`, type: 'reply', at: Date.now() - 1_000, data: { profileUrl: ANN, text } });
    expect(await pollJob(env, w.accountId)).toMatchObject({ events: 1, applied: 1 });

    // The lead, as the API shows it: replied, judged from the text as a mail reply is (the reply rules).
    const lead = await env.api().get(`/api/v1/leads/${w.leadId}`).set(auth(w.token));
    expect(lead.body.lead).toMatchObject({ status: 'replied', replyKind: 'interested' });
    expect(JSON.stringify(lead.body)).not.toContain(text);

    // Its mail sequence stopped: the follow-up, due now, does not ship.
    expect(await w.sequence()).toMatchObject({ status: 'stopped', stop_reason: 'the recipient replied on the professional network' });
    await backdate(env, 'mail_sequences', { card_id: w.seqCard.id }, { next_at: Date.now() - 1 });
    const seq = await w.sequence();
    expect(await shipSequenceStep(env.deps, w.accountId, seq.id, 1)).toBe('not_active');
    expect(smtp.received.filter((m) => m.to.includes(ANN_MAIL))).toHaveLength(1);

    // The agent woke once, the reply handed as outside data (never as its instruction), and drafted an answer.
    const [wake] = await wakes(env, w.accountId);
    expect(await wakes(env, w.accountId)).toHaveLength(1);
    expect(wake).toMatchObject({ origin: 'network', text: `${ANN} replied on the professional network (interested).` });
    expect(wake.data).toEqual({
      label: 'network reply',
      content: { eventId: `reply-${w.accountId}`, leadId: w.leadId, from: ANN, replyKind: 'interested', text },
    });
    const answer = await until(async () => (await networkCards(env, w.accountId)).find((c) => c.id !== w.message.id), 20_000);
    expect(answer).toMatchObject({ status: 'pending', auto_resolve_at: null, turn_id: wake.id });
    expect(answer.payload).toMatchObject({ work: 'network_message', to: ANN });
    // Our words only: neither what Ann wrote nor the account's private notes.
    expect(JSON.stringify(answer.payload)).not.toContain('Sounds interesting');
    expect(JSON.stringify(answer.payload).toLowerCase()).not.toContain('discount ladder');
    await until(async () => (await wakes(env, w.accountId))[0]?.status === 'replied', 20_000);

    // /results network counts the reply against the message sent.
    const results = await env.api().get('/api/v1/results').set(auth(w.token));
    expect(ResultsResponse.parse(results.body).results.network).toMatchObject({
      available: true,
      data: { window: { messagesSent: 1, replies: 1, replyRate: 1 } },
    });

    // The bridge sends the same event again (a lost cursor, a retry on its side): counted and applied once.
    await overwrite(env, 'leads', { id: w.leadId }, { status: 'contacted' });
    w.bridge.events.push({ id: `reply-${w.accountId}`, type: 'reply', at: Date.now() - 1_000, data: { profileUrl: ANN, text } });
    expect(await pollJob(env, w.accountId)).toMatchObject({ events: 1, applied: 1 });
    expect(await wakes(env, w.accountId)).toHaveLength(1);
    expect(await replies(env, w.accountId)).toHaveLength(1);
    expect((await leadRow(env, w.leadId)).status).toBe('contacted');
    expect(await networkCards(env, w.accountId)).toHaveLength(2);
  });

  it('is applied once when two polls read it at the same moment', async ({ env }) => {
    const w = await world(env);
    w.bridge.events.push({ id: `race-${w.accountId}`, type: 'reply', at: Date.now(), data: { profileUrl: ANN, text: 'Happy to chat.' } });
    const results = await Promise.all([
      pollProviderEvents(env.deps, w.accountId, 'network'),
      pollProviderEvents(env.deps, w.accountId, 'network'),
    ]);
    // Each read the event at most once (the second may start after the first moved the cursor, as a loaded
    // machine showed), at least one did; whatever the interleaving, it was applied once.
    expect(results.map((r) => r.events).every((n) => n === 0 || n === 1)).toBe(true);
    expect(results.reduce((a, r) => a + r.events, 0)).toBeGreaterThanOrEqual(1);
    expect(await replies(env, w.accountId)).toHaveLength(1);
    expect(await wakes(env, w.accountId)).toHaveLength(1);
    expect((await sequenceOfCard(env, w.seqCard.id)).status).toBe('stopped');
    await until(async () => (await networkCards(env, w.accountId)).length === 2, 20_000);
  });

  it('"remove me" on the network: the lead unsubscribed, the profile blocked for good, its sequence stopped, nobody woken', async ({
    env,
  }) => {
    const w = await world(env);
    w.bridge.events.push({
      id: `remove-${w.accountId}`,
      type: 'reply',
      at: Date.now(),
      data: { profileUrl: ANN, text: 'Please remove me from your list.' },
    });
    expect(await pollJob(env, w.accountId)).toMatchObject({ applied: 1 });
    expect(await leadRow(env, w.leadId)).toMatchObject({
      status: 'unsubscribed',
      reply_kind: 'unsubscribe',
      decline_reason: 'asked to be removed',
    });
    expect(await row(env, 'blocklist_entries', { account_id: w.accountId, value: ANN })).toMatchObject({
      source: 'opt_out_reply',
    });
    expect(await w.sequence()).toMatchObject({
      status: 'stopped',
      stop_reason: 'the recipient asked on the professional network to be removed',
    });
    expect(await wakes(env, w.accountId)).toHaveLength(0);
    expect(await replies(env, w.accountId)).toHaveLength(1);
  });

  it("changes nothing for an automatic reply (out_of_office); the agent's answer never quotes private notes", async ({ env }) => {
    const w = await world(env);
    w.bridge.events.push({
      id: `ooo-${w.accountId}`,
      type: 'reply',
      at: Date.now(),
      data: { profileUrl: ANN, replyKind: 'out_of_office' },
    });
    expect(await pollJob(env, w.accountId)).toMatchObject({ applied: 1 });
    expect((await leadRow(env, w.leadId)).status).toBe('contacted');
    expect((await w.sequence()).status).toBe('active');
    expect(await wakes(env, w.accountId)).toHaveLength(0);
    expect(await replies(env, w.accountId)).toHaveLength(0);

    // A note that the agent's own answer would quote: the wake drafts nothing rather than show it to Ann.
    await memoryNotesRepository(env.deps.db).remember(
      w.accountId,
      'Thanks for your question. Happy to go through it properly; would a short call next week help?',
      null,
      Date.now(),
    );
    w.bridge.events.push({ id: `q-${w.accountId}`, type: 'reply', at: Date.now(), data: { profileUrl: ANN, text: 'What does it cost?' } });
    expect(await pollJob(env, w.accountId)).toMatchObject({ applied: 1 });
    expect((await leadRow(env, w.leadId)).reply_kind).toBe('question');
    const wake = await until(async () => {
      const [t] = await wakes(env, w.accountId);
      return t?.status === 'replied' ? t : null;
    }, 20_000);
    expect(wake.data.content).toMatchObject({ replyKind: 'question' });
    expect(await networkCards(env, w.accountId)).toHaveLength(1);
  });
});
