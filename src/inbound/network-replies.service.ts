import { dispatchTurns, type AgentDeps, type Recorded } from '../agent/messages/agent.service.js';
import { classifierBudget } from '../agent/brains/llm/model-budget.js';
import { classifyReply } from '../agent/replies/reply-classifier.js';
import { DEFAULT_DECLINE_REASON } from '../agent/replies/reply-rules.js';
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
import { emailsForProfile, leadForProfile } from '../leads/recipient.js';
import { applyOutcomes } from './effects.service.js';
import type { Outcome } from './inbound.types.js';

export { NETWORK_REPLY_LABEL } from './outcome-facts.js';

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
 * A network reply's effects, in the poll's transaction (applied once per reply: see networkPage): one more
 * kind of outcome planned by the mail reply's plan (effects.service.ts), from the facts only this channel
 * knows: who answered (the profile URL), the lead with a contact there, that contact's mail addresses, and
 * what the reply was judged to mean. A reply naming no profile is counted only: there is nobody to answer.
 * Answers the wake turn a human reply recorded (started after commit), else null.
 */
export async function applyNetworkReply(trx: Trx, config: Config, r: NetworkReply, j: ReplyJudgement): Promise<Recorded | null> {
  const { accountId, profileUrl } = r;
  if (!profileUrl) return null;
  const network = {
    accountId,
    eventId: r.eventId,
    leadId: await leadForProfile(trx, accountId, profileUrl),
    profileUrl,
    emails: await emailsForProfile(trx, accountId, profileUrl),
  };
  const outcome: Outcome = { kind: 'reply', replyKind: j.replyKind, declineReason: j.declineReason, text: r.text };
  const [applied] = await applyOutcomes(trx, config, [{ network, outcome, ref: { id: `network-${r.eventId}`, at: r.at } }]);
  return applied!.wake;
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
