import { describe, expect } from 'vitest';
import { LeadTimeline } from '../../api/dashboard/leads.schemas.js';
import { auth } from '../helpers/auth.js';
import { signedIn } from '../helpers/dashboard.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { followMailLink, receiveAnswer, type SendCard, shipMail } from '../helpers/lead-history.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';

/**
 * A lead's timeline (GET /dashboard/api/leads/{id}/timeline): a mail really shipped over SMTP, a reply and a bounce
 * processed from received mail, a person's visit through the mail's tracked link, and the lead's research, newest
 * first, each read through its owner; bounded; 404 for another account's lead.
 */

it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }));

/** A lead with two contacts and a research entry, mailed twice; dana replies, lee's address bounces, dana follows the link. */
async function historyOf(env: TestEnv, smtp: TestSmtp) {
  const { token, accountId } = await env.tenant();
  const lead = await buildLead(env.deps.db, accountId, {
    domain: 'northwind.test',
    companyName: 'Northwind Traders',
    contacts: [{ email: 'dana@northwind.test', name: 'Dana Cole' }, { email: 'lee@northwind.test' }],
    research: [{ key: 'hiring', reasoning: 'Three open sales roles', sources: [] }],
  });
  const send: SendCard = (cardId) => env.api().post(`/api/v1/review/${cardId}/send`).set(auth(token)).send({});
  const toDana = await shipMail(env, accountId, send, 'dana@northwind.test', 'Hello Northwind');
  const toLee = await shipMail(env, accountId, send, 'lee@northwind.test', 'Hello Lee');
  expect([toDana.leadId, toLee.leadId]).toEqual([lead.id, lead.id]);
  expect(await receiveAnswer(env, accountId, 'gmail-reply', toDana)).toMatchObject({ status: 'applied', kind: 'reply' });
  expect(await receiveAnswer(env, accountId, 'gmail-dsn-failure', toLee)).toMatchObject({ status: 'applied', kind: 'bounce' });
  await followMailLink(env, smtp, 'Hello Northwind');
  return { accountId, token, leadId: lead.id };
}

describe('GET /dashboard/api/leads/{id}/timeline', () => {
  it('lists the sends, the reply, the bounce, the visit and the research, newest first', async ({ env, smtp }) => {
    const { accountId, leadId } = await historyOf(env, smtp);
    const who = await signedIn(env, { accountId });
    const res = await who.request('get', `/dashboard/api/leads/${leadId}/timeline`);
    expect(res.status).toBe(200);
    const { entries, truncated } = LeadTimeline.parse(res.body);
    expect(truncated).toBe(false);
    expect(entries.map((e) => e.at)).toEqual([...entries.map((e) => e.at)].sort((a, b) => b - a));
    const byKind = (kind: string) => entries.filter((e) => e.kind === kind);
    expect(
      byKind('sent')
        .map((e) => [e.to, e.step])
        .sort(),
    ).toEqual([
      ['dana@northwind.test', 0],
      ['lee@northwind.test', 0],
    ]);
    expect(byKind('reply')).toEqual([expect.objectContaining({ replyKind: 'interested', to: null })]);
    expect(byKind('bounce')).toHaveLength(1);
    expect(byKind('visit')).toEqual([expect.objectContaining({ channel: 'email', url: 'https://example.org/pricing' })]);
    expect(byKind('research')).toEqual([expect.objectContaining({ key: 'hiring' })]);
    expect(entries).toHaveLength(6);
    // What happened after the mail went comes before it.
    const at = (kind: string) => entries.findIndex((e) => e.kind === kind);
    expect(at('reply')).toBeLessThan(entries.findIndex((e) => e.to === 'dana@northwind.test'));
    expect(at('bounce')).toBeLessThan(entries.findIndex((e) => e.to === 'lee@northwind.test'));
  });

  it('is bounded by limit (1 to 100, default 50), saying when there was more', async ({ env, smtp }) => {
    const { accountId, leadId } = await historyOf(env, smtp);
    const who = await signedIn(env, { accountId });
    const all = LeadTimeline.parse((await who.request('get', `/dashboard/api/leads/${leadId}/timeline`)).body).entries;
    const res = await who.request('get', `/dashboard/api/leads/${leadId}/timeline?limit=2`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ entries: all.slice(0, 2), truncated: true });
    for (const limit of ['0', '101', 'x']) {
      const bad = await who.request('get', `/dashboard/api/leads/${leadId}/timeline?limit=${limit}`);
      expect([bad.status, bad.body.error]).toEqual([400, 'limit must be an integer from 1 to 100']);
    }
  });

  it("answers 404 for another account's lead and for an unknown id, and shows an unmailed lead's research alone", async ({ env, smtp }) => {
    const { leadId } = await historyOf(env, smtp);
    const stranger = await signedIn(env);
    for (const id of [leadId, 'lead_unknown']) {
      const res = await stranger.request('get', `/dashboard/api/leads/${id}/timeline`);
      expect([res.status, res.body]).toEqual([404, { error: 'not found' }]);
    }
    const own = await buildLead(env.deps.db, stranger.accountId, { research: [{ key: 'fit', reasoning: 'Good fit', sources: [] }] });
    const res = await stranger.request('get', `/dashboard/api/leads/${own.id}/timeline`);
    expect(res.body).toEqual({ entries: [expect.objectContaining({ kind: 'research', key: 'fit' })], truncated: false });
  });
});
