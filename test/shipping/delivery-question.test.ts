import { describe, expect, it } from 'vitest';
import { KINDS_OF_WORK } from '../../src/channels/kinds.js';
import { adapterFor, registerAdapter } from '../../src/channels/registry.js';
import { experimentAdapter } from '../../src/experiments/experiment.adapter.js';
import { configWith } from '../helpers/config.js';
import { DELIVERY_WORDS, deliveryQuestion } from '../../src/shipping/delivery-question.js';

// The "did it go out?" card's words (src/shipping/delivery-question.ts), for each kind of work, with the adapters' own nouns.

const config = configWith({});
// Every kind's adapter, the experiments' registered as the composition roots do.
registerAdapter('experiment', experimentAdapter);
const wordsOf = (kind: (typeof KINDS_OF_WORK)[number]) => {
  const a = adapterFor(config, null as never, kind)!;
  return { noun: a.noun, service: a.service };
};

describe('the delivery question', () => {
  it('has wording for every kind of work, each pointing where that kind can be checked', () => {
    expect(Object.keys(DELIVERY_WORDS).sort()).toEqual([...KINDS_OF_WORK].sort());
    const q = (kind: (typeof KINDS_OF_WORK)[number], to: string | null, subject: string) =>
      deliveryQuestion(kind, { to, subject }, wordsOf(kind));

    const mail = q('email', 'jane@acme.test', 'Quick idea');
    expect(mail.title).toBe('Did the mail to jane@acme.test go out?');
    expect(mail.prompt).toBe(
      'The mail service took this mail but never confirmed it, and it cannot be asked. ' +
        "Check with the recipient or in the mail account's sent folder. It is not sent again unless you say so.",
    );
    expect(mail.options).toEqual([
      { value: 'mark_sent', label: 'It arrived: mark the card sent' },
      { value: 'mark_not_sent', label: 'It did not arrive: put the card back so it can be sent' },
    ]);

    const net = q('network_message', 'https://www.linkedin.com/in/ann', 'Say hello');
    expect(net.title).toBe('Did the network message to https://www.linkedin.com/in/ann go out?');
    expect(net.prompt).toMatch(/^The network provider took this network message but never confirmed it/);
    expect(net.prompt).toContain("sent messages (or sent invitations, for a connection request) of the account's profile");

    const ad = q('ad_test', null, 'Test two headlines');
    expect(ad.title).toBe('Was the ad test "Test two headlines" created?');
    expect(ad.prompt).toMatch(/^The ad platform took this ad test but never confirmed it/);
    expect(ad.prompt).toContain('Check the campaigns (and their ads) in the ad account');
    expect(ad.prompt).toMatch(/It is not created again unless you say so\.$/);

    const spend = q('spend', null, 'Raise the search ads budget');
    expect(spend.title).toBe('Was the budget change "Raise the search ads budget" applied?');
    expect(spend.prompt).toContain("Check the ad account's budget history");
    expect(spend.prompt).toContain('counts against the monthly spend cap');
    expect(spend.options.map((o) => o.label)).toEqual([
      'It was applied: mark the card sent',
      'It was not applied: put the card back so it can be approved again',
    ]);

    const post = q('blog_post', null, 'Launch notes');
    expect(post.prompt).toContain('Check whether the post is on the blog.');

    // Mail words stay with mail: no other kind sends a person to a sent folder; every kind answers with the same two values.
    for (const kind of KINDS_OF_WORK) {
      const one = q(kind, null, 't');
      expect(one.prompt.includes('sent folder'), kind).toBe(kind === 'email' || kind === 'sequence');
      expect(one.options.map((o) => o.value)).toEqual(['mark_sent', 'mark_not_sent']);
    }
  });

  it('falls back to the mail wording for a kind of work it does not know', () => {
    const q = deliveryQuestion('fax', { to: null, subject: 'Old' }, { noun: 'fax', service: 'the service' });
    expect(q.title).toBe('Did the fax "Old" go out?');
    expect(q.prompt).toContain('sent folder');
  });
});
