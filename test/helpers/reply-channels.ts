import { isBlocked } from '../../src/blocklist/blocklist.service.js';
import { applyOutcome } from '../../src/inbound/effects.service.js';
import { judgeNetworkReply, pollProviderEvents } from '../../src/inbound/network-replies.service.js';
import type { Outcome } from '../../src/inbound/inbound.types.js';
import { getLead, upsertLead } from '../../src/leads/leads.service.js';
import type { Thread } from '../../src/mail/threads.repository.js';
import type { TestEnv } from './env.js';
import { buildThread } from './factories.js';
import { activeSequence } from './inbound-mail.js';
import { connectedTenant, startProviderBridge, type ProviderBridgeStandIn } from './provider-bridge.js';

/**
 * The same reply arriving by mail or on the professional network, for tests that compare the two: an
 * account connected to a provider bridge stand-in, and per channel a lead whose contact Jane has an
 * address and a profile, with a colleague Bob; each has a running mail sequence and was sent one mail.
 */
export async function replyChannels(env: TestEnv, bridges: ProviderBridgeStandIn[]) {
  const bridge = await startProviderBridge();
  bridges.push(bridge);
  const { accountId } = await connectedTenant(env, bridge, 'network');
  let events = 0;

  async function lead(channel: 'mail' | 'network', opts: { colleague?: boolean } = {}) {
    const domain = `${channel}-${Math.random().toString(36).slice(2, 8)}.test`;
    const jane = `jane@${domain}`;
    const bob = `bob@${domain}`;
    const slug = `jane-${domain.replace(/\W/g, '-')}`;
    const profile = `https://www.linkedin.com/in/${slug}`;
    const contacts = [{ name: 'Jane', email: jane, profileUrl: `linkedin.com/in/${slug}/` }];
    if (opts.colleague !== false) contacts.push({ name: 'Bob', email: bob, profileUrl: `linkedin.com/in/bob-${slug}` });
    const { id: leadId } = await upsertLead(env.deps.db, accountId, { domain, contacts });
    const threads: Record<string, Thread> = {};
    const seqs: Record<string, string> = {};
    for (const to of opts.colleague === false ? [jane] : [jane, bob]) {
      threads[to] = await buildThread(env.deps.db, accountId, { leadId, to });
      seqs[to] = await activeSequence(env, accountId, leadId, to);
    }
    // The mail to each contact settled: they are `contacted` (what a send's settling writes).
    await env.deps.db('lead_contacts').where({ lead_id: leadId }).update({ status: 'contacted', status_at: Date.now() });
    await env.deps.db('leads').where({ id: leadId }).update({ status: 'contacted' });
    return { channel, leadId, jane, bob, profile, threads, seqs };
  }
  type Lead = Awaited<ReturnType<typeof lead>>;

  const mail = (thread: Thread, outcome: Outcome) =>
    env.deps.db.transaction((trx) => applyOutcome(trx, env.deps.config, thread, outcome, { id: `im_${Math.random()}`, at: Date.now() }));

  /**
   * Jane (or Bob) answers `text`: on the network through the bridge and the real poll; by mail through the
   * effects of a matched reply, judged by the same classifier the network reply is.
   */
  async function reply(l: Lead, text: string, who: 'jane' | 'bob' = 'jane') {
    const id = `ev-${++events}-${accountId}`;
    const profileUrl = who === 'jane' ? l.profile : l.profile.replace('/in/', '/in/bob-');
    if (l.channel === 'network') {
      bridge.events.push({ id, type: 'reply', at: Date.now(), data: { profileUrl, text } });
      await pollProviderEvents(env.deps, accountId, 'network');
      return;
    }
    const reply = { accountId, eventId: id, at: Date.now(), profileUrl, text, bridgeKind: null };
    const judged = (await judgeNetworkReply(env.deps, reply))!;
    await mail(l.threads[who === 'jane' ? l.jane : l.bob]!, { kind: 'reply', ...judged, text, subject: 'Re: hello' });
  }

  /** What a reply changed, in terms both channels share. */
  async function effects(l: Lead) {
    const read = await getLead(env.deps.db, accountId, l.leadId);
    const contact = (email: string) => read.contacts.find((c) => c.email === email);
    const seq = async (to: string) => (await env.deps.db('mail_sequences').where({ id: l.seqs[to] }).first()).status as string;
    const wakes = await env.deps.db('agent_turns').where({ account_id: accountId, kind: 'wake' });
    const mine = wakes.filter((t) => t.data?.content?.leadId === l.leadId);
    return {
      lead: { status: read.status, replyKind: read.replyKind, declineReason: read.declineReason },
      jane: { status: contact(l.jane)?.status, replyKind: contact(l.jane)?.replyKind },
      bob: { status: contact(l.bob)?.status ?? null, replyKind: contact(l.bob)?.replyKind ?? null },
      janeSequence: await seq(l.jane),
      bobSequence: l.seqs[l.bob] ? await seq(l.bob) : null,
      janeOptedOut: await isBlocked(env.deps.db, accountId, l.channel === 'network' ? l.profile : l.jane),
      wakes: mine.map((t) => t.data.content.replyKind as string).sort(),
    };
  }

  return { accountId, bridge, lead, reply, mail, effects };
}
