import { afterAll, describe, expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { startInboundSmtp, type InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { runRetentionPass } from '../../src/retention/retention.service.js';
import { buildMailedLead } from '../helpers/factories.js';
import { adminCall } from '../helpers/env.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rawMessage, smtpDialog, smtpSend } from '../helpers/smtp-client.js';
import { countRows, leadRow } from '../helpers/rows.js';
import { backdate, removeRows } from '../helpers/row-setup.js';

// postmaster@ the inbound domain (RFC 5321 requires it be accepted) over a real socket: taken, kept for the
// operator apart from every account's mail, never a lead's reply.

const listeners: InboundSmtp[] = [];
afterAll(async () => {
  for (const l of listeners) await l.close();
});

async function listener(env: TestEnv, change: Partial<Config['inbound']> = {}): Promise<InboundSmtp> {
  const inbound = { ...env.deps.config.inbound, ...change };
  const l = await startInboundSmtp({ ...env.deps, config: { ...env.deps.config, inbound } }, { port: 0, host: '127.0.0.1' });
  listeners.push(l);
  return l;
}
const count = (env: TestEnv, table: string) => countRows(env, table);

describe('postmaster@ the inbound domain', () => {
  it('is taken in any case and kept as operator mail, never as a lead’s reply or anything of an account', async ({ env }) => {
    const smtp = await listener(env);
    // A message that names a lead's live token and answers its mail: were it account mail, it would be the lead's reply.
    const { leadId, thread } = await buildMailedLead(env.deps.db, (await env.tenant()).accountId);
    const raw = Buffer.concat([
      Buffer.from(`In-Reply-To: ${thread.messageId}\r\n`),
      rawMessage({ to: `reply+${thread.replyToken}@localhost`, body: 'Your server sends me spam.' }),
    ]);
    const lead = await leadRow(env, leadId);
    const inbound = await count(env, 'inbound_messages');
    for (const to of ['postmaster@localhost', 'PostMaster@LOCALHOST']) {
      const answer = await smtpSend(smtp.port, { from: 'abuse@isp.test', to: [to], raw });
      expect(answer, to).toMatchObject({ ok: true, code: 250 });
    }
    expect(await count(env, 'inbound_messages')).toBe(inbound);
    expect(await leadRow(env, leadId)).toEqual(lead);

    const listed = await adminCall(env, ['mail', 'postmaster-list']);
    const messages = listed.out!.messages as Record<string, unknown>[];
    expect(messages).toHaveLength(2);
    expect(Object.keys(messages[0]!).sort()).toEqual(['clientIp', 'helo', 'id', 'mailFrom', 'rcptTo', 'receivedAt', 'size']);
    expect(messages[0]).toMatchObject({
      mailFrom: 'abuse@isp.test',
      rcptTo: [expect.stringMatching(/^postmaster@localhost$/i)],
      clientIp: '127.0.0.1',
      size: raw.length,
    });
    expect(JSON.stringify(listed)).not.toContain('spam');
    const read = await adminCall(env, ['mail', 'postmaster-read', '--id', messages[0]!.id as string]);
    expect((read.out!.message as { raw: string }).raw).toContain('Your server sends me spam.');
    expect(await adminCall(env, ['mail', 'postmaster-read', '--id', 'opm_nope'])).toEqual({ error: 'not found' });
  });

  it('goes in a transaction of its own: a token recipient beside it is asked to come in another (452 4.5.3)', async ({ env }) => {
    const smtp = await listener(env);
    const { thread } = await buildMailedLead(env.deps.db, (await env.tenant()).accountId);
    for (const [first, second] of [
      ['postmaster@localhost', `reply+${thread.replyToken}@localhost`],
      [`reply+${thread.replyToken}@localhost`, 'postmaster@localhost'],
    ] as const) {
      const s = await smtpDialog(smtp.port);
      try {
        await s.reply();
        await s.say('EHLO mixer.test');
        await s.say('MAIL FROM:<a@isp.test>');
        expect(await s.say(`RCPT TO:<${first}>`)).toMatch(/^250 /);
        expect(await s.say(`RCPT TO:<${second}>`)).toMatch(/^452 4\.5\.3 mail to postmaster goes in a transaction of its own/);
      } finally {
        s.close();
      }
    }
  });

  it('is refused 452 4.2.2 at RCPT while the operator mail kept is at its cap, and kept for a stated time', async ({ env }) => {
    const smtp = await listener(env, { postmasterBytes: 1 });
    await removeRows(env, 'operator_mail');
    expect((await smtpSend(smtp.port, { from: 'a@isp.test', to: ['postmaster@localhost'], raw: rawMessage() })).code).toBe(250);
    const full = await smtpSend(smtp.port, { from: 'a@isp.test', to: ['postmaster@localhost'], raw: rawMessage() });
    expect(full).toMatchObject({ ok: false, code: 452 });
    expect(full.response).toContain('4.2.2 mailbox full');

    // Retention: past INBOUND_POSTMASTER_RETENTION_DAYS it is deleted, and postmaster takes mail again.
    const keep = env.deps.config.inbound.postmasterRetentionMs;
    await backdate(env, 'operator_mail', {}, { received_at: Date.now() - keep - 1_000 });
    const pass = await runRetentionPass(env.deps, createLogger('silent'), { only: ['operatorMail'] });
    expect(pass.removed.operatorMail).toBe(1);
    expect(await count(env, 'operator_mail')).toBe(0);
    expect((await smtpSend(smtp.port, { from: 'a@isp.test', to: ['postmaster@localhost'], raw: rawMessage() })).code).toBe(250);
  });
});
