import { describe, expect } from 'vitest';
import { recordContactOutcome } from '../../src/leads/contact-status.js';
import { getLead } from '../../src/leads/leads.service.js';
import { recordLeadMailOutcome } from '../../src/leads/mail-outcome.js';
import { buildLead } from '../helpers/factories.js';
import { it } from '../helpers/fixture.js';

// A weaker reply kind never replaces a stronger one (src/leads/reply-strength.ts), on real Postgres:
// per contact and for the lead its contacts decide (mail), and on the lead itself (network replies).

describe('reply kinds keep the strongest', () => {
  it("a contact's and a colleague's later 'other' keep 'interested'; a later decision replaces it", async ({ env }) => {
    const { accountId } = await env.tenant();
    const jane = 'jane@acme.test';
    const bob = 'bob@acme.test';
    const lead = await buildLead(env.deps.db, accountId, { domain: 'acme.test', contacts: [{ email: jane }, { email: bob }] });
    const reply = (address: string, replyKind: 'interested' | 'other' | 'question' | 'not_interested', at: number) =>
      recordContactOutcome(env.deps.db, { accountId, leadId: lead.id, address, outcome: { status: 'replied', replyKind } }, at);
    const now = Date.now();
    await reply(jane, 'interested', now);
    await reply(jane, 'other', now + 1);
    await reply(bob, 'question', now + 2);
    let read = await getLead(env.deps.db, accountId, lead.id);
    expect(read).toMatchObject({ status: 'replied', replyKind: 'interested' });
    expect(read.contacts.find((c) => c.email === jane)).toMatchObject({ replyKind: 'interested' });
    expect(read.contacts.find((c) => c.email === bob)).toMatchObject({ replyKind: 'question' });
    await reply(jane, 'not_interested', now + 3);
    read = await getLead(env.deps.db, accountId, lead.id);
    expect(read).toMatchObject({ status: 'replied', replyKind: 'not_interested' });
  });

  it("the lead-level outcome (network replies): 'other' after 'interested' keeps it; 'not_interested' replaces it", async ({ env }) => {
    const { accountId } = await env.tenant();
    const lead = await buildLead(env.deps.db, accountId, { domain: 'net.test', status: 'contacted' });
    const reply = (replyKind: 'interested' | 'other' | 'not_interested') =>
      recordLeadMailOutcome(env.deps.db, accountId, lead.id, { status: 'replied', replyKind, declineReason: null }, Date.now());
    expect(await reply('interested')).toBe(true);
    await reply('other');
    expect(await getLead(env.deps.db, accountId, lead.id)).toMatchObject({ status: 'replied', replyKind: 'interested' });
    await reply('not_interested');
    expect(await getLead(env.deps.db, accountId, lead.id)).toMatchObject({ replyKind: 'not_interested' });
  });
});
