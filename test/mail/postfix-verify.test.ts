import { afterAll, describe, expect } from 'vitest';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { it as base, type TestEnv } from '../helpers/fixture.js';
import { INBOUND_DOMAIN, MAILBOX_DOMAIN, startPostfix, swaks, type Postfix } from '../helpers/postfix.js';
import { freePort, until } from '../helpers/processes.js';

/**
 * docs/sending-mail.md's "Behind your own Postfix" recipe with recipient verification: Postfix relays the
 * inbound domain to the service's listener by a transport map, and verifies each recipient there
 * (`check_recipient_access` → `reject_unverified_recipient`, `unverified_recipient_reject_code = 550`)
 * before it answers RCPT. Without it Postfix took any address at the domain and bounced it later, to a
 * sender that may be forged (backscatter); with it the listener's 550 reaches the sender at RCPT.
 */
const inboundPort = await freePort();
const SENDER = `agent@${INBOUND_DOMAIN}`;

const it = base.extend('postfix', { scope: 'file' }, async ({}, { onCleanup }) => {
  const postfix = await startPostfix({ users: [`alice@${MAILBOX_DOMAIN}`], inboundPort, verifyInbound: true });
  onCleanup(() => postfix.stop());
  return postfix;
});
it.override('options', ({ postfix }) => ({
  env: {
    MAIL_TRANSPORT: 'smtp',
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: String(postfix.port),
    MAIL_FROM: `Growth Agent <${SENDER}>`,
    INBOUND_MAIL_DOMAIN: INBOUND_DOMAIN,
  },
}));

let postfix: Postfix;
let inbound: InboundSmtp;
it.beforeAll(async ({ env, postfix: p }: { env: TestEnv; postfix: Postfix }) => {
  postfix = p;
  inbound = await startInboundSmtp(env.deps, { port: inboundPort, host: '127.0.0.1' });
});
afterAll(async () => {
  await inbound?.close();
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
