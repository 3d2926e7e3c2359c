import { afterAll, describe, expect } from 'vitest';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { forwardOperatorMail, MAX_FORWARD_TRIES, sweepOperatorMail } from '../../src/inbound/operator-mail.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { rawMessage, smtpSend } from '../helpers/smtp-client.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';

// postmaster@ routed to the operator: a message taken at our listener reaches INBOUND_POSTMASTER_FORWARD_TO through
// the service's own mail transport (the SMTP stand-in is the relay), once, quoting what arrived.

const OPERATOR = 'ops@example.com';
let env: TestEnv;
let smtp: TestSmtp;
let listener: InboundSmtp;
it.override('options', ({ smtp }) => ({ env: { ...smtpEnv(smtp), INBOUND_POSTMASTER_FORWARD_TO: OPERATOR }, pools: ['inbound-mail'] }));
it.beforeAll(async ({ env: e, smtp: s }) => {
  env = e;
  smtp = s;
  listener = await startInboundSmtp(env.deps, { port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await listener?.close();
});

const forwards = () => smtp.received.filter((m) => m.to.includes(OPERATOR));
const row = (id: string) => env.deps.db('operator_mail').where({ id }).first();

describe('mail to postmaster@ with an operator address set', () => {
  it('forwards it once to the operator, from our sender, quoting the message, and marks it forwarded', async () => {
    smtp.mode = { kind: 'accept' };
    const raw = rawMessage({
      to: 'postmaster@localhost',
      subject: 'Abuse report 7781',
      body: 'Your server sent us mail we did not ask for.',
    });
    expect(await smtpSend(listener.port, { from: 'abuse@isp.test', to: ['postmaster@localhost'], raw })).toMatchObject({ code: 250 });

    const [mail] = await until(async () => (forwards().length ? forwards() : null));
    expect(mail!.raw).toContain('Subject: Mail to postmaster@localhost (opm_');
    expect(mail!.raw).toContain('Nothing about its sender is verified');
    expect(mail!.raw).toContain('Abuse report 7781');
    expect(mail!.raw).toContain('Envelope sender: abuse@isp.test');
    expect(mail!.from).toBe('agent@localhost');

    const kept = await env.deps.db('operator_mail').orderBy('received_at', 'desc').first();
    await until(async () => (await row(kept.id)).forwarded_at !== null);
    // A repeat of the job (a retry, the sweep) sends nothing more.
    expect(await forwardOperatorMail(env.deps, kept.id)).toBe('skipped');
    expect(await sweepOperatorMail(env.deps, Date.now() + 3_600_000)).toBe(0);
    expect(forwards()).toHaveLength(1);
  });

  it('retries a forward the relay refuses, a bounded number of times, and keeps the message for the admin verbs', async () => {
    smtp.mode = { kind: 'refuse', code: 451 };
    const before = forwards().length;
    const raw = rawMessage({ to: 'postmaster@localhost', subject: 'Second report', body: 'Please look.' });
    expect(await smtpSend(listener.port, { from: 'noc@isp.test', to: ['postmaster@localhost'], raw })).toMatchObject({ code: 250 });
    const kept = await until(async () => env.deps.db('operator_mail').where({ mail_from: 'noc@isp.test' }).first());

    // Each try is counted on the row; once the tries are used up neither the job nor the sweep sends again.
    for (let i = 0; i < MAX_FORWARD_TRIES + 2; i++) await forwardOperatorMail(env.deps, kept.id).catch(() => 'failed');
    const after = await row(kept.id);
    expect(after.forwarded_at).toBeNull();
    expect(after.forward_tries).toBe(MAX_FORWARD_TRIES);
    expect(await sweepOperatorMail(env.deps, Date.now() + 3_600_000)).toBe(0);
    expect(forwards()).toHaveLength(before);
    expect(await row(kept.id)).toMatchObject({ id: kept.id, mail_from: 'noc@isp.test' });
  });
});
