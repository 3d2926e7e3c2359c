import { afterAll, beforeAll, describe, expect } from 'vitest';
import { connectProvider } from '../../src/channels/connections.js';
import { sweepProviderPolls } from '../../src/channels/provider-poll.js';
import { pollProviderEvents } from '../../src/inbound/network-replies.service.js';
import { providerPoll, providerPollSweep } from '../../src/jobs/provider-polls.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { recordChannelEvent } from '../../src/results/channel-events.js';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { pendingJob } from '../../src/jobs/registry.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { startProviderBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { auth } from '../helpers/auth.js';
import { leadRow, row, rows } from '../helpers/rows.js';
import { overwrite } from '../helpers/row-setup.js';

let good: ProviderBridgeStandIn;
let failing: ProviderBridgeStandIn;
it.override('options', { pools: ['provider-polls'] });
beforeAll(async () => {
  good = await startProviderBridge();
  failing = await startProviderBridge();
  failing.state.eventsStatus = 500;
});
afterAll(async () => {
  await good.close();
  await failing.close();
});

const connect = (env: TestEnv, accountId: string, bridge: ProviderBridgeStandIn) =>
  connectProvider(
    env.deps.db,
    env.config.sealing,
    { accountId, kind: 'network', transport: 'http', url: bridge.url, key: bridge.key },
    Date.now(),
  );
const networkEvents = (env: TestEnv, accountId: string) =>
  rows(env, 'channel_events', { account_id: accountId, channel: 'network' }).orderBy('type').select('type', 'ref_id');

describe('polling the network provider', () => {
  it('applies a reply to the lead with that profile URL and counts an accepted request, each once', async ({ env }) => {
    const { accountId } = await env.tenant();
    await connect(env, accountId, good);
    const lead = await upsertLead(env.deps.db, accountId, {
      domain: 'bo.test',
      status: 'contacted',
      contacts: [{ name: 'Bo', profileUrl: 'https://www.linkedin.com/in/bo' }],
    });
    const at = Date.now() - 60_000;
    good.events.push(
      { id: 'ev-1', type: 'accepted', at, data: { profileUrl: 'https://www.linkedin.com/in/bo' } },
      { id: 'ev-2', type: 'reply', at, data: { profileUrl: 'linkedin.com/in/Bo/', replyKind: 'interested' } },
      { id: 'ev-3', type: 'something_new', at, data: {} },
    );
    expect(await pollProviderEvents(env.deps, accountId, 'network')).toEqual({ connected: true, events: 3, applied: 2, ignored: 1 });
    expect(await networkEvents(env, accountId)).toEqual([
      { type: 'connection_accepted', ref_id: 'network-ev-1' },
      { type: 'reply', ref_id: 'network-ev-2' },
    ]);
    expect(await leadRow(env, lead.id)).toMatchObject({ status: 'replied', reply_kind: 'interested' });
    // The cursor moved: a second poll reads nothing new; a cursor lost (reset) reads them again but counts nothing twice.
    expect(await pollProviderEvents(env.deps, accountId, 'network')).toMatchObject({ events: 0, applied: 0 });
    await overwrite(env, 'provider_connections', { account_id: accountId }, { poll_cursor: null });
    expect(await pollProviderEvents(env.deps, accountId, 'network')).toMatchObject({ events: 3 });
    expect(await networkEvents(env, accountId)).toHaveLength(2);
    // This account has no ads connection: nothing is polled for it.
    expect(await pollProviderEvents(env.deps, accountId, 'ads')).toEqual({ connected: false, events: 0, applied: 0, ignored: 0 });
  });

  it('polls each connected account in its own job: a failing provider fails alone, a few tries, and its cursor stays', async ({ env }) => {
    const a = await env.tenant();
    const b = await env.tenant();
    await connect(env, a.accountId, good);
    await connect(env, b.accountId, failing);
    // A bridge's events are its account's: this one starts afresh.
    good.events.length = 0;
    good.events.push({ id: 'ev-a', type: 'accepted', at: Date.now(), data: {} });
    const before = failing.state.polls;
    expect(await sweepProviderPolls(env.deps)).toBeGreaterThanOrEqual(2);
    await until(async () => (await networkEvents(env, a.accountId)).length > 0, 20_000);
    expect(await networkEvents(env, a.accountId)).toEqual([{ type: 'connection_accepted', ref_id: 'network-ev-a' }]);
    // Its first try failed and the next waits (backoff): the job is not lost, and account a went on regardless.
    const queue = env.deps.queues.get(providerPoll.queue)!;
    const retrying = await until(async () => {
      const job = await pendingJob(queue, providerPoll.key({ accountId: b.accountId, kind: 'network' }));
      return job && (await job.getState()) === 'delayed' ? job : null;
    }, 20_000);
    expect(failing.state.polls).toBe(before + 1);
    expect(retrying.attemptsMade).toBe(1);
    expect(retrying.failedReason).toBe("the network provider's events answered HTTP 500");
    expect(providerPoll.options.attempts).toBe(3);
    const found = await row(env, 'provider_connections', { account_id: b.accountId });
    expect(found).toMatchObject({ poll_cursor: null, polled_at: null });
  });

  it('shows on /results network: requests sent, accepted, messages sent, replies and the reply rate', async ({ env }) => {
    const { accountId, token } = await env.tenant(['results:read']);
    const bridge = await startProviderBridge();
    try {
      await connect(env, accountId, bridge);
      const read = async () => {
        const res = await env.api().get('/api/v1/results').set(auth(token));
        expect(res.status).toBe(200);
        return ResultsResponse.parse(res.body).results.network;
      };
      // Connected with nothing yet: zeros, and no rate to divide.
      expect(await read()).toMatchObject({
        available: true,
        data: { window: { requestsSent: 0, messagesSent: 0, replies: 0, connectionsAccepted: 0, replyRate: null } },
      });
      const at = Date.now() - 60_000;
      for (const [type, refId] of [
        ['request_sent', 's1'],
        ['message_sent', 's2'],
        ['message_sent', 's3'],
      ] as const)
        await recordChannelEvent(env.deps.db, accountId, { channel: 'network', type, at, decidedBy: 'person', refId });
      bridge.events.push({ id: 'r1', type: 'reply', at, data: {} }, { id: 'a1', type: 'accepted', at, data: {} });
      await pollProviderEvents(env.deps, accountId, 'network');
      expect(await read()).toMatchObject({
        available: true,
        data: { window: { requestsSent: 1, messagesSent: 2, replies: 1, connectionsAccepted: 1, replyRate: 0.5 } },
      });
    } finally {
      await bridge.close();
    }
  });

  it('is scheduled when the provider-polls pool starts', async ({ env }) => {
    const schedulers = await env.deps.queues.get(providerPollSweep.queue)!.getJobSchedulers();
    expect(schedulers.find((s) => s.key === providerPollSweep.key({}))).toMatchObject({ name: 'provider.poll-sweep', every: 60_000 });
  });
});
