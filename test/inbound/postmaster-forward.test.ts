import { describe, expect } from 'vitest';
import { forwardOperatorMail, MAX_FORWARD_TRIES, sweepOperatorMail } from '../../src/inbound/operator-mail.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { rawMessage, smtpSend } from '../helpers/smtp-client.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { row, rows } from '../helpers/rows.js';

// postmaster@ routed to the operator: a message taken at our listener reaches INBOUND_POSTMASTER_FORWARD_TO through
// the service's own mail transport (the SMTP stand-in is the relay), once, quoting what arrived.

const OPERATOR = 'ops@example.com';
it.override('options', ({ smtp }) => ({
  env: { ...smtpEnv(smtp), INBOUND_POSTMASTER_FORWARD_TO: OPERATOR },
  pools: ['inbound-mail'],
}));

const forwards = (smtp: TestSmtp) => smtp.received.filter((m) => m.to.includes(OPERATOR));
const operatorMail = (env: TestEnv, id: string) => row(env, 'operator_mail', { id });

describe('mail to postmaster@ with an operator address set', () => {
  it('forwards it once to the operator, from our sender, quoting the message, and marks it forwarded', async ({
    smtp,
    inbound: listener,
    env,
  }) => {
    smtp.mode = { kind: 'accept' };
    const raw = rawMessage({
      to: 'postmaster@localhost',
      subject: 'Abuse report 7781',
      body: 'Your server sent us mail we did not ask for.',
    });
    expect(await smtpSend(listener.port, { from: 'abuse@isp.test', to: ['postmaster@localhost'], raw })).toMatchObject({ code: 250 });

    const [mail] = await until(async () => (forwards(smtp).length ? forwards(smtp) : null));
    expect(mail!.raw).toContain('Subject: Mail to postmaster@localhost (opm_');
    expect(mail!.raw).toContain('Nothing about its sender is verified');
    expect(mail!.raw).toContain('Abuse report 7781');
    expect(mail!.raw).toContain('Envelope sender: abuse@isp.test');
    expect(mail!.from).toBe('agent@localhost');

    const kept = await rows(env, 'operator_mail').orderBy('received_at', 'desc').first();
    await until(async () => (await operatorMail(env, kept.id)).forwarded_at !== null);
    // A repeat of the job (a retry, the sweep) sends nothing more.
    expect(await forwardOperatorMail(env.deps, kept.id)).toBe('skipped');
    expect(await sweepOperatorMail(env.deps, Date.now() + 3_600_000)).toBe(0);
    expect(forwards(smtp)).toHaveLength(1);
  });

  it('retries a forward the relay refuses, a bounded number of times, and keeps the message for the admin verbs', async ({
    smtp,
    inbound: listener,
    env,
  }) => {
    smtp.mode = { kind: 'refuse', code: 451 };
    const before = forwards(smtp).length;
    const raw = rawMessage({ to: 'postmaster@localhost', subject: 'Second report', body: 'Please look.' });
    expect(await smtpSend(listener.port, { from: 'noc@isp.test', to: ['postmaster@localhost'], raw })).toMatchObject({ code: 250 });
    const kept = await until(async () => row(env, 'operator_mail', { mail_from: 'noc@isp.test' }));

    // Each try is counted on the row; once the tries are used up neither the job nor the sweep sends again.
    for (let i = 0; i < MAX_FORWARD_TRIES + 2; i++) await forwardOperatorMail(env.deps, kept.id).catch(() => 'failed');
    const after = await operatorMail(env, kept.id);
    expect(after.forwarded_at).toBeNull();
    expect(after.forward_tries).toBe(MAX_FORWARD_TRIES);
    expect(await sweepOperatorMail(env.deps, Date.now() + 3_600_000)).toBe(0);
    expect(forwards(smtp)).toHaveLength(before);
    expect(await operatorMail(env, kept.id)).toMatchObject({ id: kept.id, mail_from: 'noc@isp.test' });
  });
});
