import { afterAll, describe, expect } from 'vitest';
import { createApp } from '../../api/app.js';
import { routes as tableRoutes } from '../../api/routes/index.js';
import { createDeps, type Deps } from '../../src/deps.js';
import { createLogger } from '../../src/logger.js';
import { configWith } from '../helpers/config.js';
import { envFor } from '../helpers/env.js';
import { buildCard } from '../helpers/factories.js';
import { selfSignedCertificate } from '../helpers/certificates.js';
import { MAILBOX_DOMAIN, sendingThrough } from '../helpers/postfix.js';
import { withPostfix } from '../helpers/postfix-fixture.js';
import request from 'supertest';
import { auth } from '../helpers/auth.js';
import { sendOfCard } from '../helpers/rows.js';

/**
 * A relay whose STARTTLS certificate Node does not trust, as Debian's stock Postfix (its snakeoil
 * certificate) is: a private Postfix offering STARTTLS with a self-signed certificate made here by openssl.
 * A card's send fails with the TLS cause in the 503, in the send's stored error and in a log line; with
 * the certificate trusted through SMTP_TLS_CA_FILE the same card is sent and Postfix delivers it.
 */
const ALICE = `alice@${MAILBOX_DOMAIN}`;
const tls = selfSignedCertificate();
const { certFile } = tls;

const lines: string[] = [];
const logger = createLogger('warn', { write: (line: string) => void lines.push(line) });
const test = withPostfix({ users: [ALICE], tls: { certFile: tls.certFile, keyFile: tls.keyFile } });
test.override('options', ({ postfix }) => ({ env: sendingThrough(postfix), logger }));

let trusted: Deps | null = null;
afterAll(async () => {
  await trusted?.close();
  tls.remove();
});

const TLS_CAUSE = 'self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)';

describe('a relay whose STARTTLS certificate Node does not trust', () => {
  test('fails the send naming the TLS cause (answer, stored error, log); trusted by SMTP_TLS_CA_FILE the same card goes out', async ({
    postfix,
    env,
  }) => {
    expect(postfix.version).toMatch(/^3\./);
    const { accountId, token } = await env.tenant(['review:read', 'review:write']);
    const subject = `TLS check ${Date.now()}`;
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: ALICE, draft: { subject, body: 'Over TLS.' } },
    });

    const failed = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(failed.status, JSON.stringify(failed.body)).toBe(503);
    expect(failed.body).toMatchObject({ error: 'unavailable' });
    expect(failed.body.message).toContain(`could not be reached (TLS failed: ${TLS_CAUSE}); nothing was sent`);
    expect(failed.headers['retry-after']).toBeDefined();
    const fence = await sendOfCard(env, card.id);
    expect(fence).toMatchObject({ status: 'not_sent', last_error: `TLS with the SMTP server failed: ${TLS_CAUSE}` });
    const logged = lines.map((l) => JSON.parse(l) as { level: number; msg: string; reason?: string; sendId?: string });
    expect(logged).toContainEqual(
      expect.objectContaining({ msg: 'not sent: the mail service could not be reached', sendId: fence.id, reason: fence.last_error }),
    );
    expect(postfix.count(ALICE)).toBe(0);

    // The same database and card, a service that trusts the certificate (a private CA's file) for the relay.
    trusted = createDeps(configWith({ ...envFor(env.config), ...sendingThrough(postfix), SMTP_TLS_CA_FILE: certFile }), logger);
    await trusted.ready();
    const app = createApp(trusted, tableRoutes);
    const sent = await request(app).post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    expect(sent.body).toMatchObject({ status: 'sent', to: ALICE });
    const [mail] = await postfix.waitForMail(ALICE);
    expect(mail).toContain(`Subject: ${subject}`);
    // Postfix's smtpd counted the first session's STARTTLS as failed and the second's as done.
    expect(postfix.log()).toMatch(/starttls=0\/1/);
    expect(postfix.log()).toMatch(/ehlo=2 starttls=1 mail=1 rcpt=1 data=1/);
  });
});
