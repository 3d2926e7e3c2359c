import { dispatchTurns, recordTurns, type AgentDeps, type Recorded } from '../agent/messages/agent.service.js';
import { classifierBudget } from '../agent/brains/llm/model-budget.js';
import { classifyReply } from '../agent/replies/reply-classifier.js';
import { DEFAULT_DECLINE_REASON } from '../agent/replies/reply-rules.js';
import { addToBlocklist } from '../blocklist/blocklist.service.js';
import type { ConnectionKind } from '../channels/connections.js';
import {
  pollProvider,
  type NetworkReply,
  type NetworkReplyEffects,
  type PollResult,
  type ReplyJudgement,
} from '../channels/provider-poll.js';
import type { Config } from '../config.js';
import type { Trx } from '../db.js';
import { recordLeadMailOutcome } from '../leads/mail-outcome.js';
import { emailsForProfile, leadForProfile } from '../leads/recipient.js';
import { stopSequencesMany } from '../shipping/sequence-state.js';
import { WAKE_TEXT_MAX } from './effects.service.js';

/** The outside-data label of a network reply's wake (the offline brain answers it with a network message). */
export const NETWORK_REPLY_LABEL = 'network reply';

/**
 * What a network reply means, judged as a mail reply is: its text (outside data) by `classifyReply`
 * (the rules, or the model with the llm brain). Without text, the kind the bridge gave, else `other`.
 * A bridge's `out_of_office` is an automatic reply (null): like a mail auto-reply, it changes nothing.
 */
export async function judgeNetworkReply(deps: AgentDeps, r: NetworkReply): Promise<ReplyJudgement | null> {
  if (r.bridgeKind === 'out_of_office') return null;
  if (r.text.trim()) {
    const v = await classifyReply(deps.config.agent, r.text, null, { mayAsk: classifierBudget(deps, r.accountId) });
    return { replyKind: v.replyKind, declineReason: v.declineReason };
  }
  const replyKind = r.bridgeKind ?? 'other';
  return { replyKind, declineReason: DEFAULT_DECLINE_REASON[replyKind] ?? null };
}

/**
 * A network reply's effects, in the poll's transaction (applied once per reply: see networkPage), as a
 * mail reply's (effects.service.ts): the lead with that profile URL becomes `replied` with the kind (an
 * `unsubscribe` kind: `unsubscribed`, and the profile goes on the block list for good, `opt_out_reply`);
 * the lead's active sequences stop, and those to the mail of the same contact; and, for a reply that is
 * not a removal, a wake turn for the agent carrying the reply as outside data, started after commit. A
 * reply naming no profile is counted only: there is nobody to answer.
 */
export async function applyNetworkReply(trx: Trx, config: Config, r: NetworkReply, j: ReplyJudgement): Promise<Recorded | null> {
  const { accountId, profileUrl } = r;
  if (!profileUrl) return null;
  const leadId = await leadForProfile(trx, accountId, profileUrl);
  const removal = j.replyKind === 'unsubscribe';
  if (removal) await addToBlocklist(trx, accountId, [profileUrl], 'opt_out_reply', null);
  if (leadId) {
    const outcome = removal
      ? { status: 'unsubscribed' as const, replyKind: j.replyKind, declineReason: j.declineReason ?? 'asked to be removed' }
      : { status: 'replied' as const, replyKind: j.replyKind, declineReason: j.declineReason };
    await recordLeadMailOutcome(trx, accountId, leadId, outcome, r.at);
  }
  const reason = removal
    ? 'the recipient asked on the professional network to be removed'
    : 'the recipient replied on the professional network';
  const stops = [
    ...(leadId ? [{ accountId, leadId, reason }] : []),
    ...(await emailsForProfile(trx, accountId, profileUrl)).map((to) => ({ accountId, to, reason })),
  ];
  await stopSequencesMany(trx, stops, r.at);
  if (removal) return null;
  const content = { eventId: r.eventId, leadId, from: profileUrl, replyKind: j.replyKind, text: r.text.slice(0, WAKE_TEXT_MAX) };
  const [wake] = await recordTurns(trx, config, [
    {
      accountId,
      kind: 'wake',
      origin: 'network',
      text: `${profileUrl} replied on the professional network (${j.replyKind}).`,
      data: { label: NETWORK_REPLY_LABEL, content },
    },
  ]);
  return wake!;
}

/** The effects a network reply has here, for the provider poll (src/channels/provider-poll.ts). */
export function networkReplyEffects(deps: AgentDeps): NetworkReplyEffects<Recorded> {
  return {
    judge: (r) => judgeNetworkReply(deps, r),
    apply: (trx, r, j) => applyNetworkReply(trx, deps.config, r, j),
    after: (wakes) => dispatchTurns(deps, wakes),
  };
}

/** One provider poll of an account (the `provider.poll` job): its events applied, a network reply with all its effects. */
export function pollProviderEvents(deps: AgentDeps, accountId: string, kind: ConnectionKind): Promise<PollResult> {
  return pollProvider(deps, accountId, kind, networkReplyEffects(deps));
}
