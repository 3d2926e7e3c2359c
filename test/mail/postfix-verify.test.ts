import { describe, expect } from 'vitest';
import { INBOUND_DOMAIN, MAILBOX_DOMAIN, sendingThrough, swaks, type Postfix } from '../helpers/postfix.js';
import { withPostfix } from '../helpers/postfix-fixture.js';
import { until } from '../helpers/processes.js';

/**
 * docs/sending-mail.md's "Behind your own Postfix" recipe with recipient verification: Postfix relays the
 * inbound domain to the service's listener by a transport map, and verifies each recipient there
 * (`check_recipient_access` → `reject_unverified_recipient`, `unverified_recipient_reject_code = 550`)
 * before it answers RCPT. Without it Postfix took any address at the domain and bounced it later, to a
 * sender that may be forged (backscatter); with it the listener's 550 reaches the sender at RCPT.
 */
const SENDER = `agent@${INBOUND_DOMAIN}`;

const it = withPostfix({ users: [`alice@${MAILBOX_DOMAIN}`], verifyInbound: true });
it.override('options', ({ postfix }) => ({ env: sendingThrough(postfix) }));

let postfix: Postfix;
it.beforeAll(({ postfix: p, relayed: _listening }) => {
  postfix = p;
});

/**
 * swaks up to RCPT. Postfix may answer 450 "Address verification in progress" while its probe is under way,
 * as it would a real sender, which tries again: so does this, until the probe's answer is in Postfix's cache.
 */
async function rcpt(from: string, to: string) {
  return until(
    async () => {
      const tried = swaks(postfix.port, ['--from', from, '--to', to, '--quit-after', 'RCPT']);
      return /<\*\* 450 4\.1\.1 .*verification in progress/.test(tried.output) ? null : tried;
    },
    30_000,
    500,
  );
}

describe('Postfix with recipient verification in front of the listener', () => {
  it('refuses an unknown address at the inbound domain at RCPT with 550, and takes one the listener takes', async () => {
    // A forged message to an address no token names: refused while the sender is still connected.
    const forged = await rcpt('innocent@elsewhere.test', `nobody@${INBOUND_DOMAIN}`);
    expect(forged.output).toMatch(/<\*\* 550 5\.1\.1 <nobody@inbound\.test>: Recipient address rejected: undeliverable address/);
    // The probe asked the listener, which refused it (the reason Postfix keeps with its answer).
    expect(postfix.log()).toMatch(/nobody@inbound\.test.*status=undeliverable/);
    // The bounce address is one the listener takes: Postfix answers 250 at RCPT.
    const known = await rcpt('someone@elsewhere.test', SENDER);
    expect(known.output).toMatch(new RegExp(`-> RCPT TO:<${SENDER}>\\s+<-\\s+250 `));
    // Nothing was queued, so nothing bounces to the forged sender.
    await postfix.drained();
    expect(postfix.log()).not.toMatch(/to=<innocent@elsewhere\.test>/);
  });
});
