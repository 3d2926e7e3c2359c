import { expect } from 'vitest';
import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { inboundRepository, type InboundMessage } from '../../src/inbound/inbound.repository.js';
import { getLead } from '../../src/leads/leads.service.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import type { DnsStandIn } from './dns-server.js';
import type { TestEnv } from './env.js';
import { buildCard, buildLead, buildThread } from './factories.js';
import { mailFixture } from './mail-fixtures.js';
import { waitFor } from './processes.js';
import { rows } from './rows.js';
import { smtpSend } from './smtp-client.js';

/**
 * The world of the tests that send mail to the service's own inbound SMTP listener (the fixture's `inbound`) and
 * watch what processing it (the inbound-mail pool) changed: our own sender check pointed at the DNS stand-in
 * (the fixture's `dns`), a mailed lead at a domain of its own, delivery over a real socket until the message settled.
 */

type World = Pick<TestEnv, 'deps' | 'tenant'>;

/** Settings that point our own DKIM/SPF/DMARC check at the DNS stand-in, with a short deadline. */
export function senderCheckEnv(dns: Pick<DnsStandIn, 'address'>, timeoutMs = 1500): Record<string, string> {
  return { INBOUND_AUTH_DNS_SERVERS: dns.address, INBOUND_AUTH_DNS_TIMEOUT_MS: String(timeoutMs) };
}

/** Waits until processing settled the inbound message `id` (any status but `received`), and returns its row. */
export async function settledInbound(env: Pick<TestEnv, 'deps'>, id: string, timeoutMs = 30_000): Promise<InboundMessage> {
  let row: InboundMessage | null = null;
  await waitFor(
    async () => {
      row = await inboundRepository(env.deps.db).find(id);
      return row !== null && row.status !== 'received';
    },
    `inbound ${id} settled`,
    timeoutMs,
  );
  return row!;
}

/** Sends `raw` over SMTP to the listener on `port` (expecting its 250) and waits until processing settled it. */
export async function deliverSmtp(
  env: Pick<TestEnv, 'deps'>,
  port: number,
  mail: { from: string; to: string; raw: Buffer },
): Promise<InboundMessage> {
  const answer = await smtpSend(port, { from: mail.from, to: [mail.to], raw: mail.raw });
  expect(answer, answer.response).toMatchObject({ ok: true });
  return settledInbound(env, /queued as (\S+)/.exec(answer.response)![1]!);
}

/** An active one-step mail sequence to `to`, as the sequence path writes it; its id. */
export async function activeSequence(env: Pick<TestEnv, 'deps'>, accountId: string, leadId: string | null, to: string, dueInMs = 60_000) {
  const id = `seq_${Math.random().toString(36).slice(2)}`;
  const at = Date.now();
  await env.deps.db('mail_sequences').insert({
    id,
    account_id: accountId,
    card_id: `card_${id}`,
    lead_id: leadId,
    to_address: to,
    steps: JSON.stringify([{ subject: 'a', body: 'b', delayMs: 0 }]),
    next_step: 1,
    next_at: at + dueInMs,
    status: 'active',
    created_at: at,
    updated_at: at,
  });
  return id;
}

/**
 * What a mail outcome changed for a lead: its status, whether `address` is blocked, its sequence's status (when it
 * has `seqId`), and the account's email counts (channel event types, sorted).
 */
export async function outcomeState(
  env: Pick<TestEnv, 'deps'>,
  of: { accountId: string; leadId: string; address: string; seqId?: string | null },
) {
  return {
    lead: (await getLead(env.deps.db, of.accountId, of.leadId)).status,
    blocked: await isBlocked(env.deps.db, of.accountId, of.address),
    ...(of.seqId ? { sequence: (await rows(env, 'mail_sequences', { id: of.seqId }))[0].status as string } : {}),
    events: (await rows(env, 'channel_events', { account_id: of.accountId })).map((e: { type: string }) => e.type).sort(),
  };
}

/**
 * A fresh account's lead at a domain of its own (so no other account mailed its contact) with contact jane, sent one
 * mail (its thread; with `sentCard` a `mail_draft` card marked sent as well) and, with `sequence`, an active
 * sequence to her. `state()` reads what a mail outcome changes (the lead's status, the block list, the sequence, the
 * email counts); `fixture(name)` is a mail fixture answering the thread, moved to the lead's domain.
 */
export async function mailedLeadAtOwnDomain(env: World, opts: { sequence?: boolean; sentCard?: boolean } = {}) {
  const domain = `d${Math.random().toString(36).slice(2, 10)}.test`;
  const jane = `jane@${domain}`;
  const { accountId, token } = await env.tenant();
  const lead = await buildLead(env.deps.db, accountId, { domain, status: 'contacted', contacts: [{ email: jane }] });
  const card = opts.sentCard ? await buildCard(env.deps.db, accountId, 'mail_draft', { status: 'sent' }) : null;
  const thread = await buildThread(env.deps.db, accountId, { leadId: lead.id, to: jane, ...(card ? { cardId: card.id } : {}) });
  const seqId = opts.sequence ? await activeSequence(env, accountId, lead.id, jane) : null;
  const state = (address = jane) => outcomeState(env, { accountId, leadId: lead.id, address, seqId });
  /** A fixture (test/fixtures/mail) answering `t` (the lead's thread), its acme.test moved to this lead's domain. */
  const fixture = (name: string, t: Partial<Thread> = thread) =>
    Buffer.from(mailFixture(name, t).toString('latin1').replaceAll('acme.test', domain), 'latin1');
  return { accountId, token, leadId: lead.id, domain, jane, thread, card, seqId, state, fixture };
}
