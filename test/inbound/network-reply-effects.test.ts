import { afterAll, describe, expect } from 'vitest';
import { it } from '../helpers/fixture.js';
import type { ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { replyChannels } from '../helpers/reply-channels.js';

/**
 * A network reply is one more kind of outcome planned by the mail reply's plan (src/inbound/effects.service.ts):
 * the same facts — the same contact answering the same words — change the same things whichever channel
 * carried them: the lead and the contact's status and kind, the contact's and the colleague's sequences,
 * the opt-out of who asked to be removed, and the agent's wake.
 */
const bridges: ProviderBridgeStandIn[] = [];
afterAll(async () => {
  for (const b of bridges) await b.close();
});

describe('a network reply and a mail reply with the same facts', () => {
  for (const [what, text, expected] of [
    ['an interested reply', 'Sounds interesting, can we talk next week?', { lead: 'replied', replyKind: 'interested', seq: 'stopped' }],
    ['a question', 'What does it cost?', { lead: 'replied', replyKind: 'question', seq: 'stopped' }],
    ['a request to be removed', 'Please remove me from your list.', { lead: 'contacted', replyKind: null, seq: 'stopped' }],
  ] as const) {
    it(`${what}: the same effects by mail and on the network`, async ({ env }) => {
      const w = await replyChannels(env, bridges);
      const byMail = await w.lead('mail');
      const onNetwork = await w.lead('network');
      await w.reply(byMail, text);
      await w.reply(onNetwork, text);
      const mail = await w.effects(byMail);
      const network = await w.effects(onNetwork);
      expect(network).toEqual(mail);
      // What those effects are (Bob, still reachable, keeps a company that asked to be removed `contacted`).
      expect(mail.lead).toMatchObject({ status: expected.lead, replyKind: expected.replyKind });
      expect(mail.janeSequence).toBe(expected.seq);
      if (expected.replyKind) {
        expect(mail).toMatchObject({ jane: { status: 'replied' }, bobSequence: 'stopped', janeOptedOut: false });
        expect(mail.wakes).toEqual([expected.replyKind]);
      } else {
        expect(mail).toMatchObject({ jane: { status: 'unsubscribed' }, bobSequence: 'active', janeOptedOut: true, wakes: [] });
      }
    });
  }

  it('a removal request from the only contact makes the lead unsubscribed on either channel', async ({ env }) => {
    const w = await replyChannels(env, bridges);
    const byMail = await w.lead('mail', { colleague: false });
    const onNetwork = await w.lead('network', { colleague: false });
    await w.reply(byMail, 'Please remove me from your list.');
    await w.reply(onNetwork, 'Please remove me from your list.');
    const mail = await w.effects(byMail);
    expect(await w.effects(onNetwork)).toEqual(mail);
    expect(mail.lead).toEqual({ status: 'unsubscribed', replyKind: 'unsubscribe', declineReason: 'asked to be removed' });
  });
});
