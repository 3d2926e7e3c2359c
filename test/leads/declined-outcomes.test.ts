import { afterAll, describe, expect } from 'vitest';
import { upsertLead } from '../../src/leads/leads.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import type { ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { replyChannels } from '../helpers/reply-channels.js';

/**
 * The one lead-outcome rule table (src/leads/outcome-rules.ts) on the transitions the two old tables
 * disagreed on: a `declined` lead. Declined is a decision (the company said no), not a contact's status:
 * only the contact's own new answer moves it — a reply, or a removal request that leaves nobody to write
 * to — and a mail reply and a network reply reach the same state through their real paths (the effects
 * of a matched mail reply; the provider poll of a bridge event).
 */
const bridges: ProviderBridgeStandIn[] = [];
afterAll(async () => {
  for (const b of bridges) await b.close();
});

type World = Awaited<ReturnType<typeof replyChannels>>;

/** Bob answered first (interested), then the agent recorded that the company declined. */
async function declinedAfterBob(env: TestEnv, w: World, channel: 'mail' | 'network', colleague = true) {
  const l = await w.lead(channel, { colleague });
  if (colleague) await w.reply(l, 'Sounds interesting, can we talk next week?', 'bob');
  const domain = l.jane.split('@')[1]!;
  await upsertLead(env.deps.db, w.accountId, {
    domain,
    status: 'declined',
    replyKind: 'not_interested',
    declineReason: 'chose a competitor',
  });
  return l;
}

const DECLINED = { status: 'declined', replyKind: 'not_interested', declineReason: 'chose a competitor' };

describe('a declined lead', () => {
  it("stays declined when Jane asks to be removed while Bob's older reply stands, by mail and on the network", async ({ env }) => {
    const w = await replyChannels(env, bridges);
    const byMail = await declinedAfterBob(env, w, 'mail');
    const onNetwork = await declinedAfterBob(env, w, 'network');
    await w.reply(byMail, 'Please remove me from your list.');
    await w.reply(onNetwork, 'Please remove me from your list.');
    const mail = await w.effects(byMail);
    expect(await w.effects(onNetwork)).toEqual(mail);
    // Bob's reply came before the decision: it does not bring the lead back to `replied`; Jane is opted out.
    expect(mail).toMatchObject({ lead: DECLINED, jane: { status: 'unsubscribed' }, bob: { status: 'replied' }, janeOptedOut: true });
  });

  it("becomes replied when Jane answers, with Jane's kind, by mail and on the network", async ({ env }) => {
    const w = await replyChannels(env, bridges);
    const byMail = await declinedAfterBob(env, w, 'mail');
    const onNetwork = await declinedAfterBob(env, w, 'network');
    await w.reply(byMail, 'What does it cost?');
    await w.reply(onNetwork, 'What does it cost?');
    const mail = await w.effects(byMail);
    expect(await w.effects(onNetwork)).toEqual(mail);
    expect(mail.lead).toMatchObject({ status: 'replied' });
    expect(mail.jane).toEqual({ status: 'replied', replyKind: 'question' });
  });

  it('becomes unsubscribed when its only contact asks to be removed, by mail and on the network', async ({ env }) => {
    const w = await replyChannels(env, bridges);
    const byMail = await declinedAfterBob(env, w, 'mail', false);
    const onNetwork = await declinedAfterBob(env, w, 'network', false);
    await w.reply(byMail, 'Please remove me from your list.');
    await w.reply(onNetwork, 'Please remove me from your list.');
    const mail = await w.effects(byMail);
    expect(await w.effects(onNetwork)).toEqual(mail);
    expect(mail.lead).toEqual({ status: 'unsubscribed', replyKind: 'unsubscribe', declineReason: 'asked to be removed' });
  });

  it("stays declined when Jane's address bounces after Bob's older reply", async ({ env }) => {
    const w = await replyChannels(env, bridges);
    const l = await declinedAfterBob(env, w, 'mail');
    await w.mail(l.threads[l.jane]!, {
      kind: 'bounce',
      bounce: { type: 'hard', recipient: l.jane, status: '5.1.1', diagnostic: 'no such user' },
    });
    expect(await w.effects(l)).toMatchObject({ lead: DECLINED, jane: { status: 'bounced' }, bob: { status: 'replied' } });
  });
});
