import { dispatchTurns, recordTurns, type AgentDeps, type Recorded, type TurnInput } from '../agent/messages/agent.service.js';
import { addToBlocklist } from '../blocklist/blocklist.service.js';
import { recordOptOuts } from '../blocklist/opt-out.js';
import type { Config } from '../config.js';
import type { Trx } from '../db.js';
import { recordContactOutcomes } from '../leads/contact-status.js';
import { replyStopsCompany } from '../leads/lead-settings.js';
import type { LeadMailOutcome } from '../leads/mail-outcome.js';
import type { SequenceMatch } from '../mail/sequences.repository.js';
import type { Thread } from '../mail/threads.repository.js';
import { markLateBounces, type LateBounce } from '../shipping/refusals.service.js';
import { stopSequencesMany } from '../shipping/sequence-state.js';
import { recordChannelEvents, type ChannelEvent } from '../results/channel-events.js';
import type { Outcome } from './inbound.types.js';
import { factsOf, type OutcomeItem } from './outcome-facts.js';
import { fileRemovalRequests, type RemovalRequest } from './removal-request.js';
import { experimentsRepository } from '../experiments/experiments.repository.js';

/** What applying an outcome did, for the caller's record and for `afterApplied`. */
export interface Applied {
  /** The lead whose status changed (null when none did). */
  leadChanged: string | null;
  /** Active sequences of this recipient that stopped. */
  sequencesStopped: number;
  /** True when the address went on the block list (opt-out, or a hard bounce). */
  blocked: boolean;
  /** The wake turn recorded for a human reply; `afterApplied` starts it after commit. */
  wake: Recorded | null;
}

export { WAKE_TEXT_MAX, type OutcomeItem } from './outcome-facts.js';

/** The writes of a batch of outcomes, gathered so each kind is written in one statement. */
interface Writes {
  events: { accountId: string; event: ChannelEvent }[];
  leads: { accountId: string; leadId: string; address: string; outcome: LeadMailOutcome; item: number }[];
  stops: (SequenceMatch & { item: number })[];
  /** A reply's colleagues' sequences (the same lead, other addresses): stopped when the account's setting says so. */
  companyStops: (SequenceMatch & { item: number })[];
  blocks: { accountId: string; value: string; reason: string }[];
  /** Hard bounces reported after the relay took the mail: said on the send's card. */
  lateBounces: LateBounce[];
  /** Opt-outs by mail: the address blocked for good and `email.opt_out` counted. */
  optOuts: { accountId: string; address: string; at: number; refId: string }[];
  /** Opt-outs on the network: the profile blocked for good (the poll counted the reply). */
  profileOptOuts: { accountId: string; value: string }[];
  wakes: { input: TurnInput; item: number }[];
  /** Requests to be removed written by someone else than the recipient: a card for a person, nothing else. */
  removals: RemovalRequest[];
  /** Replies to mail an experiment sent: the outcome of the contact's variant. */
  replies: { accountId: string; cardId: string; positive: boolean; at: number }[];
}

/**
 * What one outcome writes (no I/O): see `applyOutcome`. The same plan for every channel: the channel's
 * facts (outcome-facts.ts) say who it is about; a network reply is counted by the poll that applies it.
 */
function plan(w: Writes, item: OutcomeItem, n: number, applied: Applied): void {
  const { outcome, ref } = item;
  const f = factsOf(item);
  const { accountId, leadId, thread } = f;
  const at = ref.at;
  // Counts of mail are keyed by the send; a network reply's count is the poll's (it applies a reply once by counting it).
  const event = (type: string, refId: string) => thread && w.events.push({ accountId, event: { channel: 'email', type, at, refId } });
  const lead = (o: LeadMailOutcome) => leadId && w.leads.push({ accountId, leadId, address: f.contact, outcome: o, item: n });
  // Only this contact's sequences: a contact's bounce or unsubscribe says nothing of the colleagues'.
  const stop = (reason: string) => {
    for (const to of f.addresses) w.stops.push({ accountId, to, reason, item: n });
  };
  const optOut = () => {
    if (thread) w.optOuts.push({ accountId, address: f.contact, at, refId: `unsubscribe-${thread.sendId}` });
    else w.profileOptOuts.push({ accountId, value: f.contact });
    applied.blocked = true;
  };
  if (outcome.unverified) {
    // Its From is whatever the sender wrote: no lead, count, sequence or block list changes; a person looks.
    if (outcome.kind === 'reply') w.wakes.push({ item: n, input: f.wake(outcome, false) });
    return;
  }
  if (outcome.requestedBy) {
    // Not the recipient's own request (a colleague answering forwarded mail): nobody opted out, not their reply.
    if (thread) w.removals.push({ thread, requestedBy: outcome.requestedBy, subject: outcome.subject ?? null, inboundId: ref.id });
    return;
  }
  switch (outcome.kind) {
    case 'auto_reply':
      return;
    case 'bounce': {
      // Only mail bounces (a report about a send).
      if (!thread) return;
      const { sendId } = thread;
      // A soft DSN (`Action: delayed`, or a 4.x.x): the MTA is still trying. Counted once per send, nothing blocked.
      if (outcome.bounce?.type === 'soft') event('delayed', `delayed-${sendId}`);
      if (outcome.bounce?.type !== 'hard') return;
      const why = [outcome.bounce.status, outcome.bounce.diagnostic].filter(Boolean).join(' ');
      const reason = `hard bounce${why ? `: ${why}` : ''}`.slice(0, 500);
      w.blocks.push({ accountId, value: thread.to, reason });
      w.lateBounces.push({ accountId, cardId: thread.cardId, sendId, step: thread.step, reason });
      applied.blocked = true;
      lead({ status: 'bounced' });
      event('bounce', `bounce-${sendId}`);
      stop('the address bounced');
      return;
    }
    case 'unsubscribe':
    case 'complaint':
      optOut();
      if (outcome.kind === 'complaint' && thread) event('complaint', `complaint-${thread.sendId}`);
      lead({ status: 'unsubscribed' });
      stop(outcome.kind === 'complaint' ? 'the recipient reported it as spam' : 'the recipient unsubscribed');
      return;
    case 'reply': {
      const replyKind = outcome.replyKind ?? 'other';
      if (thread) {
        event('reply', `reply-${thread.sendId}`);
        if (replyKind === 'interested') event('positive_reply', `reply-${thread.sendId}`);
        w.replies.push({ accountId, cardId: thread.cardId, positive: replyKind === 'interested', at });
      }
      if (replyKind === 'unsubscribe') {
        optOut();
        lead({ status: 'unsubscribed', replyKind, declineReason: outcome.declineReason ?? 'asked to be removed' });
        stop(f.stopReason.removal);
        return;
      }
      lead({ status: 'replied', replyKind, declineReason: outcome.declineReason ?? null });
      stop(f.stopReason.replied);
      if (leadId) w.companyStops.push({ accountId, leadId, reason: `${f.contact}, at the same company, replied`, item: n });
      w.wakes.push({ item: n, input: f.wake(outcome, true) });
      return;
    }
  }
}

/**
 * Applies what came back for one shipped mail, inside the caller's transaction (with the inbound row's
 * own update, so a retried job applies it once). Counts are keyed by the send (`refId`), so a second
 * reply or a repeated one-click POST counts once in `/results`:
 * - reply: the contact `replied` with its kind (the lead follows its contacts: src/leads/contact-status.ts;
 *   an `unsubscribe` kind is an opt-out as well), `email.reply` (and `positive_reply` when interested), the
 *   recipient's sequences stop, and the company's other sequences when the account says so, the agent wakes;
 * - auto_reply: nothing changes (an out-of-office is not an answer; the sequence goes on);
 * - bounce: hard → lead `bounced`, the address blocked (source `agent`, removable), `email.bounce`,
 *   sequences stop; soft → `email.delayed` and nothing else (the MTA retries; a later hard bounce settles it);
 * - unsubscribe, complaint: the address on the block list for good (`opt_out_reply`), lead
 *   `unsubscribed`, `email.opt_out`, sequences stop;
 * - unverified (nothing proves it answers our mail): a human reply wakes the agent, marked unverified,
 *   and changes nothing else; any other kind changes nothing;
 * - a request to be removed written by someone other than the recipient (`requestedBy`): a question card
 *   for a person saying who asked and about whom; nobody is opted out, nothing counts as the recipient's reply.
 * A network reply (`applyOutcomes` with `network` facts) is planned the same way: the contact at its profile
 * URL marked, the profile opted out for a removal request, the contact's sequences (its profile and its mail
 * addresses) stopped, the company's when the account says so, a wake turn; its count is the poll's.
 */
export async function applyOutcome(trx: Trx, config: Config, thread: Thread, outcome: Outcome, ref: { id: string; at: number }) {
  return (await applyOutcomes(trx, config, [{ thread, outcome, ref }]))[0]!;
}

/**
 * `applyOutcome` for many messages at once (received mail applied together): the same effects, each
 * kind of write in one statement for the whole batch, in the caller's transaction.
 */
export async function applyOutcomes(trx: Trx, config: Config, items: OutcomeItem[]): Promise<Applied[]> {
  const w: Writes = {
    events: [],
    leads: [],
    stops: [],
    companyStops: [],
    blocks: [],
    lateBounces: [],
    optOuts: [],
    profileOptOuts: [],
    wakes: [],
    removals: [],
    replies: [],
  };
  const applied = items.map((): Applied => ({ leadChanged: null, sequencesStopped: 0, blocked: false, wake: null }));
  for (const [i, item] of items.entries()) plan(w, item, i, applied[i]!);
  const at = Math.max(0, ...items.map((i) => i.ref.at));
  for (const [accountId, entries] of groupBy(w.blocks, (b) => b.accountId)) {
    await addToBlocklist(trx, accountId, entries, 'agent', null);
  }
  for (const [accountId, entries] of groupBy(w.optOuts, (o) => o.accountId)) await recordOptOuts(trx, accountId, entries);
  for (const [accountId, entries] of groupBy(w.profileOptOuts, (o) => o.accountId)) {
    await addToBlocklist(
      trx,
      accountId,
      entries.map((e) => e.value),
      'opt_out_reply',
      null,
    );
  }
  await recordChannelEvents(trx, w.events);
  await experimentsRepository(trx).replied(w.replies);
  const changed = await recordContactOutcomes(trx, w.leads, at);
  w.leads.forEach((l, n) => {
    if (changed[n]) applied[l.item]!.leadChanged = l.leadId;
  });
  const stopped = await stopSequencesMany(trx, w.stops, at);
  w.stops.forEach((s, n) => {
    applied[s.item]!.sequencesStopped += stopped[n]!;
  });
  await markLateBounces(trx, w.lateBounces, at);
  await fileRemovalRequests(trx, w.removals);
  const stopping = await replyStopsCompany(trx, [...new Set(w.companyStops.map((s) => s.accountId))]);
  const company = w.companyStops.filter((s) => stopping.has(s.accountId));
  const colleagues = await stopSequencesMany(trx, company, at);
  company.forEach((s, n) => {
    applied[s.item]!.sequencesStopped += colleagues[n]!;
  });
  if (w.wakes.length) {
    const recorded = await recordTurns(
      trx,
      config,
      w.wakes.map((x) => x.input),
    );
    w.wakes.forEach((x, n) => {
      applied[x.item]!.wake = recorded[n]!;
    });
  }
  return applied;
}

function groupBy<T>(xs: T[], key: (x: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

/** After commit: starts the wake turns human replies recorded (a failed enqueue is repaired by the sweeper). */
export async function afterApplied(deps: AgentDeps, ...applied: Applied[]): Promise<void> {
  const wakes = applied.flatMap((a) => (a.wake ? [a.wake] : []));
  if (wakes.length) await dispatchTurns(deps, wakes);
}
