import { simpleParser, type ParsedMail } from 'mailparser';
import { describe, expect } from 'vitest';
import { dispatchTurns, recordTurns, type TurnInput } from '../../src/agent/messages/agent.service.js';
import { earliestSlot } from '../../src/agent/replies/reply-wakes.js';
import type { InboundSmtp } from '../../src/inbound/smtp-listener.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { mailFixture } from '../helpers/mail-fixtures.js';
import { until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { mailLoopOptions, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

/**
 * A reply flood against the agent, through the real return path: a mail the agent drafted goes out
 * through a real SMTP server, and replies to it come back over SMTP to the service's inbound listener,
 * each with a new Message-ID (so none is a provider's repeat). The thread wakes the agent once while its
 * follow-up card waits; reply wakes past the hourly limits per lead and per account are kept, due later.
 */
const LEAD_PER_HOUR = 2;
const ACCOUNT_PER_HOUR = 3;
it.override('options', ({ smtp }) =>
  mailLoopOptions(smtp, {
    AGENT_REPLY_WAKES_PER_LEAD_PER_HOUR: String(LEAD_PER_HOUR),
    AGENT_REPLY_WAKES_PER_ACCOUNT_PER_HOUR: String(ACCOUNT_PER_HOUR),
  }),
);

const HOUR = 3_600_000;
const JANE = 'jane@acme.test';

interface World {
  token: string;
  accountId: string;
}

async function world(env: TestEnv): Promise<World> {
  const { token, accountId } = await env.tenant(['agent:message', 'review:read', 'review:write', 'leads:read', 'results:read']);
  await upsertLead(env.deps.db, accountId, { domain: 'acme.test', contacts: [{ name: 'Jane Doe', email: JANE }] });
  return { token, accountId };
}

async function waiting(env: TestEnv, w: World, sourceType: string) {
  const res = await env.api().get('/api/v1/review').set(auth(w.token));
  expect(res.status).toBe(200);
  return (res.body.items as { id: string; sourceType: string; title: string; prompt: string; detail: unknown }[]).filter(
    (c) => c.sourceType === sourceType,
  );
}

/** The agent drafts a mail to Jane, a person sends it: the message as the SMTP server got it. */
async function draftAndSend(env: TestEnv, smtp: TestSmtp, w: World, topic: string): Promise<ParsedMail> {
  const said = await env
    .api()
    .post('/api/v1/agent/messages')
    .set(auth(w.token))
    .send({ text: `draft an email to ${JANE} about ${topic}`, waitSeconds: 10 });
  expect(said.body.message.status).toBe('replied');
  const [card] = await waiting(env, w, 'mail_draft');
  expect((await env.api().post(`/api/v1/review/${card!.id}/send`).set(auth(w.token)).send({})).status).toBe(200);
  const got = smtp.received.filter((m) => m.raw.includes(`Subject: ${topic.charAt(0).toUpperCase()}${topic.slice(1)}`)).at(-1)!;
  return simpleParser(got.raw);
}

let replies = 0;
/** Jane's reply to `sent` (as Gmail writes it) with a Message-ID of its own, over SMTP to the inbound port. */
async function reply(inbound: InboundSmtp, sent: ParsedMail): Promise<void> {
  const replyTo = sent.replyTo!.value[0]!.address!;
  const replyToken = /^reply\+([0-9a-z]+)@/.exec(replyTo)![1]!;
  const raw = mailFixture('gmail-reply', { replyToken, messageId: sent.messageId! })
    .toString('latin1')
    .replace('<CAJx9Lr7f0PqZ3kV1m2Jd8yWq4Hc5uT0bN6s+Qp_2vXw@mail.gmail.com>', `<flood-${++replies}-${Date.now()}@mail.gmail.com>`);
  const answer = await smtpSend(inbound.port, { from: JANE, to: [replyTo], raw });
  expect(answer.code).toBe(250);
}

/** Waits until `n` messages of the account are applied and its agent has no turn due or running. */
async function settled(env: TestEnv, w: World, n: number): Promise<void> {
  await until(async () => {
    const found = await rows(env, 'inbound_messages', { account_id: w.accountId });
    return found.length === n && found.every((r) => r.status === 'applied');
  }, 20_000);
  await until(async () => {
    const busy = await rows(env, 'agent_turns', { account_id: w.accountId })
      .whereIn('status', ['queued', 'running'])
      .andWhere('not_before', '<=', Date.now())
      .first();
    return !busy;
  }, 20_000);
}

const wakes = (env: TestEnv, w: World) => rows(env, 'agent_turns', { account_id: w.accountId, kind: 'wake' }).orderBy('created_at');

describe('a reply flood', () => {
  it('ten replies with new Message-IDs make one wake and one card saying nine more came; a reply after it is sent wakes', async ({
    env,
    inbound,
    smtp,
  }) => {
    const w = await world(env);
    const sent = await draftAndSend(env, smtp, w, 'a quick idea for Acme');
    await Promise.all(Array.from({ length: 10 }, () => reply(inbound, sent)));
    await settled(env, w, 10);

    expect(await wakes(env, w)).toHaveLength(1);
    const cards = await waiting(env, w, 'mail_draft');
    expect(cards).toHaveLength(1);
    expect(cards[0]!.title).toBe(`Reply to ${JANE}: Quick idea for Acme`);
    expect(cards[0]!.prompt).toMatch(new RegExp(`^Review before it ships\\.\\n\\nSince this draft: 9 more replies from ${JANE} arrived`));
    expect(cards[0]!.detail).toMatchObject({ laterReplies: { count: 9 } });
    // Every reply is kept and counted in the lead's mail, none was dropped.
    expect(await rows(env, 'inbound_messages', { account_id: w.accountId, status: 'applied', kind: 'reply' })).toHaveLength(10);
    expect(await rows(env, 'agent_reply_wakes', { account_id: w.accountId })).toMatchObject([{ replies: 10 }]);

    // One more while the card waits: counted on the card, no turn.
    await reply(inbound, sent);
    await settled(env, w, 11);
    expect(await wakes(env, w)).toHaveLength(1);
    expect((await waiting(env, w, 'mail_draft'))[0]!.prompt).toContain('Since this draft: 10 more replies');

    // Once a person sent the follow-up, the thread waits for nothing: the next reply wakes the agent again.
    expect((await env.api().post(`/api/v1/review/${cards[0]!.id}/send`).set(auth(w.token)).send({})).status).toBe(200);
    await reply(inbound, sent);
    await settled(env, w, 12);
    expect(await wakes(env, w)).toHaveLength(2);
    const [again] = await waiting(env, w, 'mail_draft');
    expect(again!.prompt).toBe('Review before it ships.');
  });
});

describe('reply wakes per hour', () => {
  it('a new wake goes at the earliest moment every rolling hour keeps the limit', () => {
    const t0 = 1_000_000_000;
    expect(earliestSlot([], 2, t0)).toBe(t0);
    expect(earliestSlot([t0 - 10], 2, t0)).toBe(t0);
    expect(earliestSlot([t0 - 10, t0 - 5], 2, t0)).toBe(t0 - 10 + HOUR);
    // Two deferred an hour ahead: no rolling hour holds them and one now (a window is (s - 1h, s]).
    expect(earliestSlot([t0 + HOUR, t0 + HOUR], 2, t0)).toBe(t0);
    // One due half an hour ahead shares its hour with one a moment ago: a third waits until the first leaves it,
    // and with one more at fifty minutes, until the half-hour one leaves.
    expect(earliestSlot([t0 - 10, t0 + 30 * 60_000], 2, t0)).toBe(t0 - 10 + HOUR);
    expect(earliestSlot([t0 - 10, t0 + 30 * 60_000, t0 + 50 * 60_000], 2, t0)).toBe(t0 + 30 * 60_000 + HOUR);
  });

  const mailReply = (accountId: string, n: number, leadId: string | null, from = JANE): TurnInput => ({
    accountId,
    kind: 'wake',
    origin: 'mail',
    text: `${from} replied (not_interested) to "Re: idea ${n}".`,
    data: {
      label: 'mail reply',
      content: {
        sendId: `send_${n}`,
        leadId,
        from,
        subject: `Re: idea ${n}`,
        replyKind: 'not_interested',
        messageId: `<m${n}@x>`,
        text: 'No.',
      },
    },
  });
  const record = async (env: TestEnv, inputs: TurnInput[]) => {
    const recorded = await env.deps.db.transaction((trx) => recordTurns(trx, env.deps.config, inputs));
    await dispatchTurns(env.deps, recorded);
    return recorded;
  };

  it('a lead or an account past its hourly limit gets its wakes later, not never; /agent/status shows them waiting', async ({ env }) => {
    const w = await world(env);
    const before = Date.now();
    // Three threads of one lead: two wake now, the third an hour after the first.
    const lead = await record(
      env,
      [1, 2, 3].map((n) => mailReply(w.accountId, n, 'lead_a')),
    );
    expect(lead.map((r) => r.created)).toEqual([true, true, true]);
    expect(lead.map((r) => r.gate ?? null)).toEqual([null, null, 'deferred']);
    expect(lead[2]!.turn.notBefore).toBeGreaterThanOrEqual(before + HOUR);
    expect(lead[2]!.turn.notBefore).toBeLessThanOrEqual(Date.now() + HOUR);

    // Other leads: the account's third wake of the hour runs now (the deferred one is due later), the fourth waits.
    const others = await record(env, [mailReply(w.accountId, 4, 'lead_b', 'bo@b.test'), mailReply(w.accountId, 5, 'lead_c', 'cy@c.test')]);
    expect(others.map((r) => r.gate ?? null)).toEqual([null, 'deferred']);
    expect(others[1]!.turn.notBefore).toBeGreaterThanOrEqual(before + HOUR);

    // The three due now run (a decline: no card), the two deferred wait, and /agent/status shows them.
    await until(async () => {
      const rows = await wakes(env, w);
      return rows.filter((t) => t.status === 'replied').length === 3;
    }, 20_000);
    expect((await wakes(env, w)).filter((t) => t.status === 'queued').map((t) => t.id)).toEqual([lead[2]!.turn.id, others[1]!.turn.id]);
    const status = await env.api().get('/api/v1/agent/status').set(auth(w.token));
    expect(status.body.status).toMatchObject({ pendingWakes: 2, nextWakeAt: lead[2]!.turn.notBefore });
  });
});
