import { simpleParser } from 'mailparser';
import request from 'supertest';
import { expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { processInbound } from '../../src/inbound/process.service.js';
import type { TestEnv } from './env.js';
import { buildCard } from './factories.js';
import { mailFixture } from './mail-fixtures.js';
import { sentThread } from './sent-thread.js';
import type { TestSmtp } from './smtp-server.js';

/**
 * What happens to a lead, made through the service's own paths for the tests of a lead's timeline: a mail shipped
 * over SMTP (the fixture's `smtp`) by a person's Send, a reply or a bounce received and processed, a person's
 * visit through the mail's tracked link.
 */

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

/** Sends `POST …/review/{id}/send` (the API with a token, or the dashboard's mirror with a session). */
export type SendCard = (cardId: string) => Promise<{ status: number; body: Record<string, unknown> }>;

/** Ships a mail card to `to` with a link in its body; its thread (with the reply token). */
export async function shipMail(env: TestEnv, accountId: string, send: SendCard, to: string, subject: string) {
  const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
    payload: { work: 'email', to, draft: { subject, body: 'Our pricing: https://example.org/pricing' } },
  });
  const res = await send(card.id);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (await sentThread(env.deps.db, env.config, String(res.body.sendId)))!;
}

/** A mail fixture (test/fixtures/mail) answering `thread`, its recipient jane@acme.test made the thread's. */
const answering = (name: string, thread: { replyToken: string; messageId: string; to: string }) =>
  Buffer.from(mailFixture(name, thread).toString('latin1').replaceAll('jane@acme.test', thread.to), 'latin1');

/** Receives the fixture `name` answering `thread` on the account's inbound URL, as intake stores it, and processes it. */
export async function receiveAnswer(env: TestEnv, accountId: string, name: string, thread: Parameters<typeof answering>[1]) {
  const id = newId('im');
  const raw = answering(name, thread);
  await inboundRepository(env.deps.db).insert({ id, accountId, via: 'http', mailFrom: null, rcptTo: [], raw, receivedAt: Date.now() });
  await processInbound(env.deps, id);
  return (await inboundRepository(env.deps.db).find(id))!;
}

/** A person's browser following the tracked link of the mail `subject` the SMTP stand-in received. */
export async function followMailLink(env: TestEnv, smtp: TestSmtp, subject: string) {
  const mail = smtp.received.find((m) => m.raw.includes(subject));
  if (!mail) throw new Error(`no mail with subject ${subject}`);
  const link = /\/l\/[0-9A-Za-z]{12}/.exec((await simpleParser(mail.raw)).text ?? '')?.[0];
  if (!link) throw new Error(`the mail ${subject} has no tracked link`);
  const res = await request(env.app).get(link).set('User-Agent', BROWSER);
  expect(res.status).toBe(302);
}
