import { expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { recordChannelEvent } from '../../src/results/channel-events.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';

// No SMTP listener: replies and bounces can only come back through an account's inbound URL.
it.override('options', { env: { INBOUND_SMTP_PORT: '0' } });

const HOUR = 3_600_000;

async function emailWindow(env: TestEnv, token: string) {
  const res = await env.api().get('/api/v1/results').set(auth(token));
  expect(res.status).toBe(200);
  const email = ResultsResponse.parse(res.body).results.email;
  if (!email.available) throw new Error('email not available');
  return email.data.window;
}

it('reports replies, bounces and the reply rate as unknown (null) until the account has a return path, then as counts', async ({ env }) => {
  const { accountId, token } = await env.tenant(['results:read']);
  const at = Date.now() - HOUR;
  const db = env.deps.db;
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'sent', at, decidedBy: 'person', refId: 's1' });
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'sent', at, decidedBy: 'person', refId: 's2' });
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'opt_out', at, refId: 'unsubscribe-s1' });
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'opt_out', at, refId: 'unsubscribe-s2' });
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'complaint', at, refId: 'complaint-s2' });

  expect(await emailWindow(env, token)).toMatchObject({
    sent: 2,
    replies: null,
    positiveReplies: null,
    replyRate: null,
    bounces: null,
    delayed: null,
    // One-click unsubscribes reach the service without received mail: known either way.
    unsubscribes: 1,
    optOuts: 2,
  });

  await db('inbound_urls').insert({ id: 'inb_x', account_id: accountId, secret_hash: 'h-return-path', created_at: Date.now() });
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'reply', at, refId: 'reply-s1' });
  await recordChannelEvent(db, accountId, { channel: 'email', type: 'positive_reply', at, refId: 'reply-s1' });
  expect(await emailWindow(env, token)).toMatchObject({
    sent: 2,
    replies: 1,
    positiveReplies: 1,
    replyRate: 0.5,
    bounces: 0,
    delayed: 0,
    unsubscribes: 1,
    optOuts: 2,
  });
});
