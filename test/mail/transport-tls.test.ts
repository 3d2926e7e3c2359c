import { readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';
import { afterAll, describe, expect } from 'vitest';
import { ConfigError, loadConfig, type Config } from '../../src/config.js';
import { configWith } from '../helpers/config.js';
import { defaultEhloName, mailTransportConfig } from '../../src/config/mail-transport.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { NotSent } from '../../src/mail/mail.types.js';
import { newReplyToken } from '../../src/mail/outbound.js';
import { threadsRepository } from '../../src/mail/threads.repository.js';
import { transportFor } from '../../src/mail/transports.js';
import { selfSignedCertificate } from '../helpers/certificates.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { run, TSX } from '../helpers/processes.js';
import { rawMessage } from '../helpers/smtp-client.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { rows } from '../helpers/rows.js';

// Transport hygiene against real SMTP software on loopback: the EHLO name and required TLS of the outbound
// transport (an smtp-server that records what it is told), STARTTLS on the inbound listener (nodemailer's
// client and `openssl s_client` as the sending MTA, a self-signed certificate made by openssl).

const closers: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

interface Recorder {
  port: number;
  ehlo: string[];
  mailFrom: string[];
  received: number;
}

/** An outbound SMTP stand-in that records the EHLO names it hears, the MAIL FROMs and the messages it takes. */
async function recordingServer(startTls: boolean, tls?: { key: Buffer; cert: Buffer }): Promise<Recorder> {
  const rec: Recorder = { port: 0, ehlo: [], mailFrom: [], received: 0 };
  const server = new SMTPServer({
    logger: false,
    authOptional: true,
    disabledCommands: startTls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    hideSTARTTLS: !startTls,
    ...(tls ?? {}),
    onMailFrom(address, session, callback) {
      rec.ehlo.push(session.hostNameAppearsAs);
      rec.mailFrom.push(address.address);
      callback();
    },
    onData(stream, _session, callback) {
      stream.resume();
      stream.on('end', () => {
        rec.received++;
        callback();
      });
    },
  });
  server.on('error', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  rec.port = (server.server.address() as AddressInfo).port;
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return rec;
}

const msg = { from: 'Acme <agent@mail.acme-tls.test>', to: 'jane@example.org', subject: 'Hello', text: 'Body' };

describe('outbound SMTP transport', () => {
  it('names itself in EHLO with MAIL_EHLO_NAME, else with the machine’s FQDN, never with the From domain', async () => {
    const server = await recordingServer(false);
    const named = configWith({ ...smtpEnv(server), MAIL_EHLO_NAME: 'out.acme-tls.test' });
    await transportFor(named).send(msg, 'mail-ehlo-1');
    // Unset: the machine's host name when it is fully qualified, else nodemailer's address literal; the From
    // domain (mail.acme-tls.test here) names no host of ours.
    const unnamed = configWith({ ...smtpEnv(server), MAIL_FROM: 'Acme <agent@Mail.Acme-TLS.test>' });
    expect(unnamed.mail.smtp.ehloName).toBe(defaultEhloName(hostname()));
    await transportFor(unnamed).send(msg, 'mail-ehlo-2');
    // A host whose name is an FQDN gives it (the config read on such a host).
    const base = loadConfig(smtpEnv(server));
    const { ehloName } = mailTransportConfig({ SMTP_REQUIRE_TLS: false, SMTP_TLS_CA_FILE: null }, 'Relay-7.Acme-TLS.test');
    const fqdnHost = { ...base, mail: { ...base.mail, smtp: { ...base.mail.smtp, ehloName } } };
    await transportFor(fqdnHost).send(msg, 'mail-ehlo-3');
    expect(server.ehlo).toEqual(['out.acme-tls.test', defaultEhloName(hostname()) ?? '[127.0.0.1]', 'relay-7.acme-tls.test']);
    expect(server.ehlo).not.toContain('mail.acme-tls.test');
    expect(server.received).toBe(3);
    // A bare container id, localhost and its look-alikes name no host: nodemailer's literal.
    for (const bare of ['3f9c2a1b7d0e', 'localhost', 'localhost.localdomain', 'box.localhost']) expect(defaultEhloName(bare)).toBeNull();
    expect(() => configWith({ MAIL_EHLO_NAME: 'not a name!' })).toThrow(ConfigError);
    expect(() => configWith({ MAIL_EHLO_NAME: 'not a name!' })).toThrow(/MAIL_EHLO_NAME must be a host name/);
    expect(configWith({ MAIL_EHLO_NAME: '[192.0.2.1]' }).mail.smtp.ehloName).toBe('[192.0.2.1]');
    // Defaults: the host's name (if an FQDN), no TLS required, no private CA, no STARTTLS offered.
    // Nested by area: the relay's under mail.smtp (beside its host and port), the listener's under inbound.
    const defaults = loadConfig({});
    expect(defaults.mail.smtp).toMatchObject({ ehloName: defaultEhloName(hostname()), requireTls: false, tlsCa: null });
    expect(defaults.inbound.tls).toBeNull();
  });

  it('with SMTP_REQUIRE_TLS refuses a server that offers no STARTTLS before a byte of the mail is sent', async () => {
    const server = await recordingServer(false);
    const strict = transportFor(configWith({ ...smtpEnv(server), SMTP_REQUIRE_TLS: 'true' }));
    const refused = await strict.send(msg, 'mail-tls-1').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(NotSent);
    expect((refused as Error).message).toMatch(/STARTTLS/i);
    expect(server.mailFrom).toEqual([]);
    expect(server.received).toBe(0);
    // The same server takes the mail from a transport that does not require TLS.
    await transportFor(configWith(smtpEnv(server))).send(msg, 'mail-tls-2');
    expect(server.received).toBe(1);
  });

  it('with SMTP_REQUIRE_TLS sends over STARTTLS to a server whose certificate a private CA (NODE_EXTRA_CA_CERTS) vouches for', async () => {
    const tls = await selfSigned();
    const server = await recordingServer(true, { key: await readFile(tls.keyFile), cert: tls.cert });
    // Node reads NODE_EXTRA_CA_CERTS at start only: the send runs in a process of its own, as the service would.
    const script = `(async () => {
      const { loadConfig } = await import('./src/config.ts');
      const { transportFor } = await import('./src/mail/transports.ts');
      await transportFor(loadConfig()).send(${JSON.stringify(msg)}, 'mail-tls-4');
      console.log('sent');
    })().catch((err) => { console.error(err.message); process.exit(1); });`;
    const out = await run(TSX, ['--eval', script], {
      ...smtpEnv(server),
      SMTP_HOST: 'localhost',
      SMTP_REQUIRE_TLS: 'true',
      NODE_EXTRA_CA_CERTS: tls.certFile,
    });
    expect(out.stdout.trim(), out.stderr).toBe('sent');
    expect(server.received).toBe(1);
  });

  it('with SMTP_REQUIRE_TLS refuses a STARTTLS server whose certificate it cannot trust', async () => {
    const tls = await selfSigned();
    const server = await recordingServer(true, { key: await readFile(tls.keyFile), cert: tls.cert });
    const strict = transportFor(configWith({ ...smtpEnv(server), SMTP_REQUIRE_TLS: 'true' }));
    const refused = await strict.send(msg, 'mail-tls-3').catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(NotSent);
    expect((refused as Error).message).toMatch(/certificate/i);
    expect((refused as NotSent).detail).toBe('TLS failed: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)');
    expect(server.mailFrom).toEqual([]);
    // The same server, its certificate trusted through SMTP_TLS_CA_FILE (Node's own store stays trusted too).
    const trusting = transportFor(
      configWith({ ...smtpEnv(server), SMTP_HOST: 'localhost', SMTP_REQUIRE_TLS: 'true', SMTP_TLS_CA_FILE: tls.certFile }),
    );
    await trusting.send(msg, 'mail-tls-5');
    expect(server.received).toBe(1);
    // A file that is missing or holds no certificate stops the start naming the setting.
    expect(() => configWith({ SMTP_TLS_CA_FILE: path.join(tmpdir(), 'no-such-ca.pem') })).toThrow(
      /SMTP_TLS_CA_FILE must name a readable PEM file \(ENOENT/,
    );
    expect(() => configWith({ SMTP_TLS_CA_FILE: tls.keyFile })).toThrow(/SMTP_TLS_CA_FILE must name a PEM file of CA certificates/);
  });
});

/** A self-signed certificate (test/helpers/certificates.ts), removed after the file. */
async function selfSigned(): Promise<{ certFile: string; keyFile: string; cert: Buffer }> {
  const made = selfSignedCertificate();
  closers.push(async () => made.remove());
  return made;
}

async function listener(env: TestEnv, inboundTls: Config['inbound']['tls']): Promise<InboundSmtp> {
  const config = { ...env.deps.config, inbound: { ...env.deps.config.inbound, tls: inboundTls } };
  const l = await startInboundSmtp({ ...env.deps, config }, { port: 0, host: '127.0.0.1' });
  closers.push(() => l.close());
  return l;
}

/** A live reply token of a fresh account: the listener takes mail for it. */
async function liveToken(env: TestEnv): Promise<string> {
  const { accountId } = await env.tenant();
  const token = newReplyToken();
  await threadsRepository(env.deps.db).insert({
    sendId: `send_${token}`,
    accountId,
    cardId: `card_${token}`,
    leadId: null,
    sequenceId: null,
    step: 0,
    replyToken: token,
    messageId: `<mail-${token}@localhost>`,
    to: 'jane@example.org',
    createdAt: Date.now(),
  });
  return token;
}

/** Sends as an MTA that insists on STARTTLS and checks the certificate against `ca`. */
async function sendOverTls(port: number, ca: Buffer, to: string) {
  const client = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: { ca: [ca], servername: 'localhost' },
  });
  try {
    return await client.sendMail({ envelope: { from: 'jane@example.org', to: [to] }, raw: rawMessage({ to }) });
  } finally {
    client.close();
  }
}

const storedFor = async (env: TestEnv, token: string) =>
  (
    await rows(env, 'inbound_messages')
      .whereRaw('rcpt_to::text like ?', [`%${token}%`])
      .count<{ n: string }[]>({ n: '*' })
  )[0]!.n;

describe('inbound listener STARTTLS', () => {
  it('offers STARTTLS with the configured certificate: a sender requiring TLS delivers, openssl verifies the certificate', async ({
    env,
  }) => {
    const tls = await selfSigned();
    const l = await listener(env, { certFile: tls.certFile, keyFile: tls.keyFile });
    const token = await liveToken(env);
    const info = await sendOverTls(l.port, tls.cert, `reply+${token}@localhost`);
    expect(info.response).toMatch(/^250 /);
    expect(Number(await storedFor(env, token))).toBe(1);

    const probe = await run(
      'openssl',
      ['s_client', '-starttls', 'smtp', '-connect', `127.0.0.1:${l.port}`, '-CAfile', tls.certFile, '-verify_return_error', '-brief'],
      {},
      30_000,
    );
    expect(probe.code, probe.stderr).toBe(0);
    expect(probe.stderr).toMatch(/Verification: OK/);
  });

  it('without a certificate offers no STARTTLS: a sender that requires TLS delivers nothing', async ({ env }) => {
    const tls = await selfSigned();
    const l = await listener(env, null);
    const token = await liveToken(env);
    await expect(sendOverTls(l.port, tls.cert, `reply+${token}@localhost`)).rejects.toThrow(/STARTTLS/i);
    expect(Number(await storedFor(env, token))).toBe(0);
  });

  it('does not start with one file of the pair, or with a file it cannot read, and names the setting', async ({ env }) => {
    const tls = await selfSigned();
    await expect(listener(env, { certFile: tls.certFile, keyFile: null })).rejects.toThrow(
      /INBOUND_TLS_CERT_FILE and INBOUND_TLS_KEY_FILE/,
    );
    await expect(listener(env, { certFile: tls.certFile, keyFile: '/nonexistent/key.pem' })).rejects.toThrow(
      /INBOUND_TLS_KEY_FILE \(\/nonexistent\/key\.pem\) cannot be read: ENOENT/,
    );
    expect(configWith({ INBOUND_TLS_CERT_FILE: tls.certFile }).inbound.tls).toEqual({ certFile: tls.certFile, keyFile: null });
  });
});
