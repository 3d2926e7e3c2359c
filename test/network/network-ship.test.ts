import { agentDoors } from '../../workers/agent-turns.js';
import { afterAll, describe, expect } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { executeTool } from '../../src/agent/tools/tool.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { buildCard } from '../helpers/factories.js';
import type { TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { BRIDGE_SHIP_ENV, capturedLines, connectedTenant, withBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { approveCard } from '../helpers/approve.js';
import { cardRow, leadRow, row, rows, sendOfCard } from '../helpers/rows.js';

const it = withBridge('nk_live_SECRET_9f8e7d');

const { lines, sink } = capturedLines();

it.override('options', {
  logger: createLogger('trace', sink),
  env: BRIDGE_SHIP_ENV,
  pools: ['shipments'],
});

const connected = (env: TestEnv, bridge: ProviderBridgeStandIn) => connectedTenant(env, bridge, 'network');

const networkCard = (env: TestEnv, accountId: string, payload: Record<string, unknown>) =>
  buildCard(env.deps.db, accountId, 'approval', {
    sourceType: 'network_message',
    title: 'Say hello to Ann',
    payload: { work: 'network_message', to: 'https://linkedin.com/in/Ann-Lee/', draft: { body: 'Hello Ann' }, ...payload },
  });

const eventsOf = (env: TestEnv, accountId: string) =>
  rows(env, 'channel_events', { account_id: accountId, channel: 'network' }).orderBy('type').select('type', 'decided_by');

describe('network messages through the provider bridge', () => {
  afterAll(() => {
    // Every ship, refusal, lost answer and reconciliation below logged at trace: the key is in none of it.
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain('nk_live_SECRET_9f8e7d');
  });

  it('ships an approved message once, to the canonical profile URL, and the lead it reaches becomes contacted', async ({ bridge, env }) => {
    bridge.state.mode = 'accept';
    const { accountId, token } = await connected(env, bridge);
    const lead = await upsertLead(env.deps.db, accountId, {
      domain: 'ann.test',
      contacts: [{ name: 'Ann', profileUrl: 'linkedin.com/in/ann-lee' }],
    });
    const card = await networkCard(env, accountId, {});
    const res = await approveCard(env, token, card.id);
    expect(res.status).toBe(200);
    const fence = await sendOfCard(env, card.id);
    const tries = bridge.posts.filter((p) => p.key === fence.idempotency_key);
    expect(tries).toHaveLength(1);
    expect(tries[0]!.authorization).toBe(`Bearer ${bridge.key}`);
    expect(tries[0]!.body).toMatchObject({
      kind: 'network_message',
      to: 'https://www.linkedin.com/in/ann-lee',
      subject: 'Say hello to Ann',
      body: 'Hello Ann',
      details: { mode: 'message', accountId, leadId: lead.id },
    });
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'sent' });
    expect(fence).toMatchObject({ status: 'sent', provider_id: bridge.shipments.find((s) => s.key === fence.idempotency_key)!.id });
    expect(await eventsOf(env, accountId)).toEqual([{ type: 'message_sent', decided_by: 'person' }]);
    expect((await leadRow(env, lead.id)).status).toBe('contacted');
    // Approving again never ships twice.
    expect((await approveCard(env, token, card.id)).status).toBe(409);
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
  });

  it('counts a connection request apart (request_sent)', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await networkCard(env, accountId, { mode: 'connect', draft: { body: '' } });
    expect((await approveCard(env, token, card.id)).status).toBe(200);
    const fence = await sendOfCard(env, card.id);
    expect(bridge.posts.find((p) => p.key === fence.idempotency_key)?.body.details).toMatchObject({ mode: 'connect' });
    expect(await eventsOf(env, accountId)).toEqual([{ type: 'request_sent', decided_by: 'person' }]);
  });

  it('answers 503 delivery_pending when the answer is lost, and reconciliation settles it by lookup without a second ship', async ({
    env,
    bridge,
  }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await networkCard(env, accountId, {});
    bridge.state.mode = 'drop-after';
    const res = await approveCard(env, token, card.id);
    bridge.state.mode = 'accept';
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ error: 'delivery_pending' });
    await until(async () => (await cardRow(env, card.id))?.status === 'sent', 20_000);
    const fence = await sendOfCard(env, card.id);
    expect(fence.status).toBe('sent');
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
    expect(bridge.shipments.filter((s) => s.key === fence.idempotency_key)).toHaveLength(1);
    expect(await eventsOf(env, accountId)).toEqual([{ type: 'message_sent', decided_by: 'person' }]);
  });

  it('re-ships under the same key when the lost try never reached the bridge, and after a timeout finds what it took', async ({
    env,
    bridge,
  }) => {
    const { accountId, token } = await connected(env, bridge);
    const dropped = await networkCard(env, accountId, {});
    bridge.state.mode = 'drop-before';
    expect((await approveCard(env, token, dropped.id)).status).toBe(503);
    bridge.state.mode = 'accept';
    await until(async () => (await cardRow(env, dropped.id))?.status === 'sent', 20_000);
    const f1 = await sendOfCard(env, dropped.id);
    expect(bridge.posts.filter((p) => p.key === f1.idempotency_key)).toHaveLength(2);
    expect(bridge.shipments.filter((s) => s.key === f1.idempotency_key)).toHaveLength(1);

    const hung = await networkCard(env, accountId, {});
    bridge.state.mode = 'hang';
    const res = await approveCard(env, token, hung.id);
    bridge.state.mode = 'accept';
    expect(res.status).toBe(503);
    expect(res.body.error).toBe('delivery_pending');
    await until(async () => (await cardRow(env, hung.id))?.status === 'sent', 20_000);
    const f2 = await sendOfCard(env, hung.id);
    expect(bridge.shipments.filter((s) => s.key === f2.idempotency_key)).toHaveLength(1);
    expect(await rows(env, 'channel_events', { account_id: accountId, type: 'message_sent' })).toHaveLength(2);
  });

  it('asks a person "did it go out?" when the bridge cannot tell within the window, and ships nothing again', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await networkCard(env, accountId, {});
    bridge.state.mode = 'drop-after';
    bridge.state.lookupStatus = 500;
    try {
      expect((await approveCard(env, token, card.id)).status).toBe(503);
      const question = await until(
        async () => row(env, 'review_cards', { account_id: accountId, source_type: 'mail_delivery_unknown' }),
        20_000,
      );
      expect(question.title).toBe('Did the network message to https://www.linkedin.com/in/ann-lee go out?');
      // Worded for the network (src/shipping/delivery-question.ts), not for mail.
      expect(question.prompt).toContain("Check the sent messages (or sent invitations, for a connection request) of the account's profile");
      expect(question.prompt).not.toContain('sent folder');
      expect(question.options.map((o: { label: string }) => o.label)).toEqual([
        'It was sent: mark the card sent',
        'It was not sent: put the card back so it can be sent',
      ]);
      bridge.state.mode = 'accept';
      const res = await env
        .api()
        .post(`/api/v1/review/${question.id}/answer`)
        .set(auth(token))
        .send({ action: 'choose', optionValues: ['mark_sent'] });
      expect(res.status).toBe(200);
    } finally {
      bridge.state.mode = 'accept';
      bridge.state.lookupStatus = 0;
    }
    expect(await cardRow(env, card.id)).toMatchObject({ status: 'sent' });
    const fence = await sendOfCard(env, card.id);
    expect(bridge.posts.filter((p) => p.key === fence.idempotency_key)).toHaveLength(1);
    expect(await eventsOf(env, accountId)).toEqual([{ type: 'message_sent', decided_by: 'person' }]);
  });

  it('gives the card back when the bridge refuses: 503 for now, 409 for good; nothing counted', async ({ env, bridge }) => {
    const { accountId, token } = await connected(env, bridge);
    const card = await networkCard(env, accountId, {});
    bridge.state.mode = 'refuse';
    const now = await approveCard(env, token, card.id);
    expect(now.status).toBe(503);
    expect(now.body.error).toBe('unavailable');
    expect((await cardRow(env, card.id)).status).toBe('pending');
    bridge.state.mode = 'reject';
    const never = await approveCard(env, token, card.id);
    bridge.state.mode = 'accept';
    expect(never.status).toBe(409);
    expect(never.body).toEqual({ error: 'rejected', message: expect.stringContaining('that profile cannot be messaged') });
    expect((await cardRow(env, card.id)).status).toBe('pending');
    expect(await eventsOf(env, accountId)).toEqual([]);
  });

  it('refuses a recipient that is not a profile URL, a blocked profile, and an account without a network connection', async ({
    env,
    bridge,
  }) => {
    const { accountId, token } = await connected(env, bridge);
    const before = bridge.posts.length;
    const notProfile = await networkCard(env, accountId, { to: 'https://example.com/ann' });
    const r1 = await approveCard(env, token, notProfile.id);
    expect(r1.status).toBe(409);
    expect(r1.body.message).toMatch(/^a network message goes to a profile URL \(https:\/\/www\.linkedin\.com\/in\/<slug>\)/);
    expect((await cardRow(env, notProfile.id)).status).toBe('pending');

    const blocked = await env
      .api()
      .post('/api/v1/blocklist')
      .set(auth(token))
      .send({ entries: ['https://www.linkedin.com/in/ann-lee'] });
    expect(blocked.status).toBeLessThan(300);
    const toBlocked = await networkCard(env, accountId, { to: 'HTTPS://LINKEDIN.COM/in/Ann-Lee?trk=x' });
    const r2 = await approveCard(env, token, toBlocked.id);
    expect(r2.status).toBe(409);
    expect(r2.body.message).toMatch(/is on the block list/);

    // The agent drafts nothing to it either (the ship tool reads the profile URL the block list's way).
    const toolEnv = {
      db: env.deps.db,
      accountId,
      turnId: 'turn_none',
      fromOutside: false,
      config: env.config,
      onReply: async () => undefined,
      doors: agentDoors,
    };
    const call = {
      id: 'c1',
      name: 'ship',
      args: { work: 'network_message', title: 'Hi', to: 'www.linkedin.com/in/ANN-LEE/', body: 'Hello' },
    };
    expect(await executeTool(call, toolEnv)).toMatchObject({
      ok: false,
      result: 'www.linkedin.com/in/ANN-LEE/ is on the block list, so nothing was drafted to it',
    });

    const other = await env.tenant();
    const unconnected = await networkCard(env, other.accountId, {});
    const r3 = await approveCard(env, other.token, unconnected.id);
    expect(r3.status).toBe(409);
    expect(r3.body).toEqual({
      error: 'rejected',
      message: 'network messages cannot ship: no professional-network connection on this account',
    });
    expect(bridge.posts.length).toBe(before);
    expect(await rows(env, 'shipments').whereIn('card_id', [notProfile.id, toBlocked.id, unconnected.id])).toEqual([]);
  });
});
