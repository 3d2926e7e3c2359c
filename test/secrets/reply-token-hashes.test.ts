import { randomBytes } from 'node:crypto';
import { simpleParser, type ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import { runAdmin } from '../../src/admin/commands.js';
import { replyTokenOf } from '../../src/mail/outbound.js';
import { configWith } from '../helpers/config.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { answered, replyMime } from '../helpers/mail-reply.js';
import { run, until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { mailLoopOptions, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { overwrite } from '../helpers/row-setup.js';

// Reply and unsubscribe tokens are kept as hashes: the database (pg_dump of this file's database) never holds
// the token a sent mail carries, and replying to that mail or one-click unsubscribing with it still works.

const K1 = `k1:${randomBytes(32).toString('base64')}`;
it.override('options', ({ smtp }) => mailLoopOptions(smtp, { SEALING_KEYS: K1 }));

/** The agent drafts a mail to `to`, a person sends it through the API: the mail as the SMTP server got it, and its send. */
async function sentMail(
  env: TestEnv,
  smtp: TestSmtp,
  to: string,
  topic: string,
): Promise<{ mail: ParsedMail; raw: string; sendId: string; token: string; apiToken: string }> {
  const { token: apiToken, accountId } = await env.tenant(['agent:message', 'review:read', 'review:write', 'leads:read']);
  await upsertLead(env.deps.db, accountId, { domain: to.split('@')[1]!, contacts: [{ name: 'Jane Doe', email: to }] });
  const said = await env
    .api()
    .post('/api/v1/agent/messages')
    .set(auth(apiToken))
    .send({ text: `draft an email to ${to} about ${topic}`, waitSeconds: 10 });
  expect(said.body.message.status).toBe('replied');
  const review = await env.api().get('/api/v1/review').set(auth(apiToken));
  const card = (review.body.items as { id: string; sourceType: string }[]).find((c) => c.sourceType === 'mail_draft')!;
  const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(apiToken)).send({});
  expect(res.status).toBe(200);
  const got = smtp.received.filter((m) => m.raw.includes(`Subject: ${topic.charAt(0).toUpperCase()}${topic.slice(1)}`)).at(-1)!;
  const mail = await simpleParser(got.raw);
  const token = /^reply\+([0-9a-z]+)@/.exec(mail.replyTo!.value[0]!.address!)![1]!;
  return { mail, raw: got.raw, sendId: res.body.sendId as string, token, apiToken };
}

/** The whole database as pg_dump writes it (only the tables named, when some are). */
async function dump(env: TestEnv, ...tables: string[]): Promise<string> {
  const out = await run('pg_dump', ['--data-only', ...tables.flatMap((t) => ['-t', t]), env.config.databaseUrl], {});
  expect(out.code).toBe(0);
  return out.stdout;
}

describe('reply and unsubscribe tokens kept as hashes', { timeout: 120_000 }, () => {
  it('the database holds no token a sent mail carries; a reply to that mail is still matched to its send', async ({
    env,
    smtp,
    inbound,
  }) => {
    const { raw, sendId, token } = await sentMail(env, smtp, 'jane@hash.test', 'hashed replies');
    // The mail carries it in Reply-To, the envelope sender and both List-Unsubscribe forms.
    expect(raw).toContain(`reply+${token}@`);
    expect(raw).toContain(`/u/${token}`);
    const whole = await dump(env);
    expect(whole).toContain(sendId);
    expect(whole).not.toContain(token);

    const answer = await smtpSend(inbound.port, {
      from: 'jane@hash.test',
      to: [`reply+${token}@localhost`],
      raw: replyMime(await answered(raw), 'Sounds good, call me'),
    });
    expect(answer.code).toBe(250);
    const found = await until(async () => {
      const r = await row(env, 'inbound_messages', { send_id: sendId });
      return r && r.status !== 'received' ? r : null;
    }, 20_000);
    expect(found).toMatchObject({ status: 'applied', kind: 'reply' });
    // What we keep of the thread and the fence still holds no token (the received message is the recipient's own bytes).
    expect(await dump(env, 'mail_threads', 'shipments', 'service_secrets')).not.toContain(token);
  });

  it('one-click unsubscribe with the token from the sent mail puts the address on the block list', async ({ env, smtp }) => {
    const { mail, token, apiToken } = await sentMail(env, smtp, 'jo@hash.test', 'hashed unsubscribe');
    const oneClick =
      /<(http[^>]+\/u\/[^>]+)>/.exec(String(mail.headers.get('list-unsubscribe') ?? ''))?.[1] ?? `${env.config.baseUrl}/u/${token}`;
    const path = new URL(oneClick).pathname;
    expect(path).toBe(`/u/${token}`);
    expect((await env.api().get(path)).status).toBe(200);
    const res = await env.api().post(path).type('application/x-www-form-urlencoded').send('List-Unsubscribe=One-Click');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, to: expect.stringMatching(/^j\*\*\*@/) });
    const blocked = await env.api().get('/api/v1/blocklist').set(auth(apiToken));
    expect(JSON.stringify(blocked.body)).toContain('jo@hash.test');
    expect((await env.api().get(`/u/${'0'.repeat(26)}`)).status).toBe(404);
    expect(await dump(env)).not.toContain(token);
  });

  it('forget-reply-tokens clears the plaintext the previous version kept, and the hash still finds the thread', async ({ env, smtp }) => {
    const { sendId, token } = await sentMail(env, smtp, 'old@hash.test', 'hashed legacy');
    // As the previous version wrote it: the token in clear on the thread (the trigger keeps its hash) and in the fence.
    await overwrite(env, 'mail_threads', { send_id: sendId }, { reply_token: token });
    await env.deps.db.raw(
      `UPDATE shipments SET details = (details - 'replyTokenSealed') || jsonb_build_object('replyToken', ?::text) WHERE id = ?`,
      [token, sendId],
    );
    expect(await dump(env, 'mail_threads', 'shipments')).toContain(token);
    const out = await runAdmin(['secrets', 'forget-reply-tokens'], { config: env.config, db: env.deps.db });
    expect(out).toEqual({ threadsCleared: 1, fencesSealed: 1 });
    expect(await dump(env)).not.toContain(token);
    const fence = await rows(env, 'shipments', { id: sendId }).first('details');
    expect(fence.details.replyTokenSealed).toMatch(/^v2\.k1\./);
    expect((await env.api().get(`/u/${token}`)).status).toBe(200);
    expect(await runAdmin(['secrets', 'forget-reply-tokens'], { config: env.config, db: env.deps.db })).toEqual({
      threadsCleared: 0,
      fencesSealed: 0,
    });
  });

  it('secrets reseal moves the sealed token of every fence under the newest key; the token still opens', async ({ env, smtp }) => {
    const { sendId, token } = await sentMail(env, smtp, 'rot@hash.test', 'hashed rotation');
    const rotated = configWith({ SEALING_KEYS: `${K1},k2:${randomBytes(32).toString('base64')}` });
    const out = await runAdmin(['secrets', 'reseal'], { config: rotated, db: env.deps.db });
    expect(out).toMatchObject({ key: 'k2', changedMeanwhile: 0 });
    const fence = await rows(env, 'shipments', { id: sendId }).first('details');
    expect(fence.details.replyTokenSealed).toMatch(/^v2\.k2\./);
    expect(await replyTokenOf(env.deps.db, rotated, fence.details)).toBe(token);
    await expect(replyTokenOf(env.deps.db, env.config, fence.details)).rejects.toThrow(/could not be opened/);
  });
});
