import { classifyReply } from '../agent/reply-classifier.js';
import type { Deps } from '../deps.js';
import type { Thread } from '../mail/threads.repository.js';
import { classifyKind } from './classify.js';
import { afterApplied, applyOutcome, type Applied } from './effects.service.js';
import { inboundRepository, type InboundMessage, type InboundResult } from './inbound.repository.js';
import type { Outcome } from './inbound.types.js';
import { matchMail, recipientsOf, tokenAddresses, type MatchedBy } from './match.js';
import { parseMail } from './parse.js';

/** What parsing and applying a received message needs. */
export type InboundDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues'>;

const isUniqueViolation = (err: unknown, constraint: string) =>
  (err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === constraint;

type Decision =
  | { status: 'applied'; thread: Thread; outcome: Outcome; matchedBy: MatchedBy; rule: string; headerMessageId: string | null }
  | { status: 'unplaced' | 'malformed'; reason: string; accountId?: string | null; kind?: Outcome['kind']; rule?: string };

/**
 * Everything that needs no lock: parse, classify, match, and (for a human reply) the reply's kind, which
 * may ask the model. Reads only; nothing here changes a row, so a retry repeats it harmlessly.
 */
async function decide(deps: InboundDeps, row: InboundMessage & { raw: Buffer }): Promise<Decision> {
  const { config } = deps;
  const parsed = await parseMail(row.raw);
  if (!parsed.ok) return { status: 'malformed', reason: parsed.reason };
  const mail = parsed.mail;
  const domain = config.inbound.domain;
  const tokens = tokenAddresses(recipientsOf(mail, row.rcptTo), domain);
  const verdict = classifyKind(
    mail,
    tokens.some((t) => t.kind === 'unsubscribe'),
  );
  const report = verdict.kind === 'bounce' || verdict.kind === 'complaint' || mail.reportType !== null;
  const match = await matchMail(
    deps.db,
    { domain, accountId: row.accountId, rcptTo: row.rcptTo, report, bounceRecipient: verdict.bounce?.recipient ?? null },
    mail,
  );
  if (!match.ok) return { status: 'unplaced', reason: match.reason, kind: verdict.kind, rule: verdict.rule };
  const outcome: Outcome = { kind: verdict.kind, bounce: verdict.bounce, subject: mail.subject };
  let rule = verdict.rule;
  if (verdict.kind === 'reply') {
    const reply = await classifyReply(config.agent, verdict.newText, mail.subject);
    outcome.replyKind = reply.replyKind;
    outcome.declineReason = reply.declineReason;
    outcome.text = verdict.newText;
    rule = `${rule}; ${reply.rule}`;
  }
  return { status: 'applied', thread: match.thread, outcome, matchedBy: match.matchedBy, rule, headerMessageId: mail.messageId };
}

function settled(d: Decision): InboundResult {
  if (d.status !== 'applied') {
    return { status: d.status, reason: d.reason, kind: d.kind ?? null, details: d.rule ? { rule: d.rule } : null };
  }
  return {
    status: 'applied',
    accountId: d.thread.accountId,
    kind: d.outcome.kind,
    replyKind: d.outcome.replyKind ?? null,
    sendId: d.thread.sendId,
    leadId: d.thread.leadId,
    headerMessageId: d.headerMessageId,
    details: {
      matchedBy: d.matchedBy,
      rule: d.rule,
      ...(d.outcome.bounce ? { bounce: d.outcome.bounce } : {}),
      ...(d.outcome.declineReason ? { declineReason: d.outcome.declineReason } : {}),
    },
  };
}

/**
 * Parses one stored message (`inbound_messages.id`), matches it to a send, classifies it and applies the
 * outcome. The work that reads (and may ask the model) runs first, without a lock; then one transaction
 * settles the row, only if it is still `received` (the conditional UPDATE takes the row lock, so of two
 * concurrent or retried jobs the first wins and the other changes nothing), and applies the outcome in the
 * same commit. A provider's repeat (same account and Message-ID as an applied message) settles as
 * `duplicate`: a unique index lets only one of them be `applied`. A client's bad mail never throws: it is kept as `malformed` or
 * `unplaced` with a reason; only infrastructure errors throw (the job retries them).
 */
export async function processInbound(deps: InboundDeps, id: string): Promise<void> {
  const repo = inboundRepository(deps.db);
  const row = await repo.withRaw(id);
  if (row?.status !== 'received') return;
  const decision = await decide(deps, row);
  const at = Date.now();
  let applied: Applied | null;
  try {
    applied = await deps.db.transaction(async (trx): Promise<Applied | null> => {
      const locked = inboundRepository(trx);
      if (decision.status !== 'applied') {
        await locked.settle(id, settled(decision), at);
        return null;
      }
      if (!(await locked.settle(id, settled(decision), at))) return null;
      return applyOutcome(trx, deps.config, decision.thread, decision.outcome, { id, at });
    });
  } catch (err) {
    // A provider's repeat of a message already applied (same account and Message-ID): kept, not applied twice.
    if (decision.status !== 'applied' || !isUniqueViolation(err, 'inbound_messages_applied_once')) throw err;
    const accountId = decision.thread.accountId;
    const earlier = await repo.appliedWithHeaderId(accountId, decision.headerMessageId ?? '', id);
    await repo.settle(
      id,
      {
        status: 'duplicate',
        reason: `the same message (Message-ID) was applied as ${earlier ?? 'an earlier message'}`,
        accountId,
        kind: decision.outcome.kind,
        sendId: decision.thread.sendId,
        headerMessageId: decision.headerMessageId,
      },
      at,
    );
    applied = null;
  }
  if (applied) await afterApplied(deps, applied);
  deps.logger.info(
    { inboundId: id, status: decision.status, kind: decision.status === 'applied' ? decision.outcome.kind : (decision.kind ?? null) },
    'inbound message processed',
  );
}
