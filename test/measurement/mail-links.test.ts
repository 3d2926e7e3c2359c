import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { sequenceIdFor } from '../../src/mail/sequences.repository.js';
import { shipSequenceStep } from '../../src/shipping/sequence-runner.js';
import { buildCard, buildLead } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';
import { afterLostAnswer } from '../helpers/lost-answer.js';
import { smtpEnv } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// Every mail ships with its links made tracked links: received by a real SMTP server on
// loopback and read back with mailparser, as the recipient's mail client would.

const BASE = 'https://agent.example.test';
const LINK = /https:\/\/agent\.example\.test\/l\/([0-9A-Za-z]{12})/g;
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

it.override('options', ({ smtp }) => ({ env: { ...smtpEnv(smtp), BASE_URL: BASE } }));

const BODY = 'Hi Peter,\n\nOur pricing: https://acme.test/pricing?plan=pro. Docs (https://docs.acme.test/start).\n\nBest';

describe('a sent mail', () => {
  it('carries tracked links in its text, one per destination, tied to the send, card and lead', async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant();
    const lead = await buildLead(env.deps.db, accountId, { domain: 'initech.test', contacts: [{ email: 'peter@initech.test' }] });
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'peter@initech.test', draft: { subject: 'subject-links', body: BODY } },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    const raw = smtp.received.find((m) => m.raw.includes('subject-links'))!.raw;
    const text = (await simpleParser(raw)).text!;
    const codes = [...text.matchAll(LINK)].map((m) => m[1]!);
    expect(codes).toHaveLength(2);
    expect(text).not.toContain('acme.test/pricing');
    expect(text).toContain(`Our pricing: ${BASE}/l/${codes[0]}. Docs (${BASE}/l/${codes[1]}).`);
    const links = await rows(env, 'tracked_links', { account_id: accountId }).orderBy('url');
    expect(links).toMatchObject([
      { code: codes[0], url: 'https://acme.test/pricing?plan=pro', channel: 'email', card_id: card.id, lead_id: lead.id },
      { code: codes[1], url: 'https://docs.acme.test/start', channel: 'email', source_type: 'send', source_id: res.body.sendId },
    ]);
    // The fence keeps the body that shipped.
    const fence = await row(env, 'shipments', { id: res.body.sendId });
    expect(JSON.stringify(fence)).toContain(`${BASE}/l/${codes[0]}`);

    // The recipient clicks: an email visit of that lead, and the destination with gvid.
    const click = await env.api().get(`/l/${codes[0]}`).set('User-Agent', BROWSER);
    expect(click.status).toBe(302);
    expect(click.headers.location).toMatch(/^https:\/\/acme\.test\/pricing\?plan=pro&gvid=vis_\w{20}$/);
    const visit = await row(env, 'visits', { account_id: accountId });
    expect(visit).toMatchObject({ channel: 'email', lead_id: lead.id, card_id: card.id, source_id: res.body.sendId });
  });

  it('tracks the link of a mail to an address no lead covered under the lead the send made for its domain', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'nobody@else.test', draft: { subject: 'subject-plain', body: 'Plain words, see https://x.test' } },
    });
    expect((await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({})).status).toBe(200);
    // Every mailed address has a lead: the send made one for else.test (source agent), and the link names it.
    const made = await row(env, 'leads', { account_id: accountId, domain: 'else.test' });
    expect(made).toMatchObject({ source: 'agent' });
    const link = await row(env, 'tracked_links', { account_id: accountId });
    expect(link).toMatchObject({ url: 'https://x.test', lead_id: made.id });
  });
});

describe('a sequence', () => {
  it("ships each step with its own tracked links, tied to that step's send", async ({ env, smtp }) => {
    const { token, accountId } = await env.tenant();
    const to = 'seq@links.test';
    const card = await buildCard(env.deps.db, accountId, 'approval', {
      sourceType: 'sequence',
      title: `Sequence to ${to}`,
      payload: {
        work: 'sequence',
        to,
        draft: { subject: 'Idea links', body: 'First: https://acme.test/one' },
        steps: [{ body: 'Again: https://acme.test/one and https://acme.test/two', delayDays: 3 }],
      },
    });
    const res = await approveCard(env, token, card.id);
    expect(res.status).toBe(200);
    await env.deps
      .db('mail_sequences')
      .where({ card_id: card.id })
      .update({ next_at: Date.now() - 1 });
    expect(await shipSequenceStep(env.deps, accountId, sequenceIdFor(card.id), 1)).toBe('shipped');
    const texts = await Promise.all(smtp.received.filter((m) => m.to.includes(to)).map(async (m) => (await simpleParser(m.raw)).text!));
    expect(texts).toHaveLength(2);
    const codes = texts.map((t) => [...t.matchAll(LINK)].map((m) => m[1]!));
    expect(codes.map((c) => c.length)).toEqual([1, 2]);
    // Each step is its own send: the same destination gets a code of its own in each.
    expect(codes[1]![0]).not.toBe(codes[0]![0]);
    const sends = await rows(env, 'shipments', { card_id: card.id }).orderBy('step');
    const links = await rows(env, 'tracked_links', { account_id: accountId });
    expect(links.filter((r: { source_id: string }) => r.source_id === sends[0].id)).toHaveLength(1);
    expect(links.filter((r: { source_id: string }) => r.source_id === sends[1].id)).toHaveLength(2);
  });
});

describe('a mail whose answer was lost, re-shipped by reconciliation over the HTTP mail API', () => {
  it('carries the same tracked links on every try', async () => {
    await afterLostAnswer({ BASE_URL: BASE }, { to: 'lost@acme.test', subject: 'subject-lost-links', body: BODY }, async (r) => {
      const codes = r.tries.map((p) => [...p.body.text.matchAll(LINK)].map((m) => m[1]));
      expect(codes[0]).toHaveLength(2);
      expect(codes[1]).toEqual(codes[0]);
      expect(await rows(r.http, 'tracked_links', { account_id: r.accountId })).toHaveLength(2);
    });
  });
});
