import { classifierBudget } from '../agent/brains/llm/model-budget.js';
import { metrics, word } from '../metrics/registry.js';
import { classifyReply } from '../agent/replies/reply-classifier.js';
import type { Deps } from '../deps.js';
import { hashReplyToken, threadsRepository, type Thread } from '../mail/threads.repository.js';
import { createBatcher, type Batcher } from '../batcher.js';
import { createByteBudget } from './byte-budget.js';
import { afterApplied, applyOutcomes, type Applied } from './effects.service.js';
import { inboundRepository, type InboundMessage, type InboundResult } from './inbound.repository.js';
import type { Outcome } from './inbound.types.js';
import { matchMail, type MatchedBy, type ThreadLookup } from './match.js';
import { readMail } from './placement.js';
import { removalByOther } from './removal-request.js';
import { proofOf, type Proof } from './proof.js';
import type { SenderAuth } from './sender-auth.js';
import { senderAuthOf } from './smtp-sender.js';

/** What parsing and applying a received message needs. */
export type InboundDeps = Pick<Deps, 'config' | 'logger' | 'db' | 'redis' | 'queues'>;

/**
 * Messages settled and applied together, in one transaction (group commit), and how many batches at once:
 * one, so the messages that arrive while a batch runs make the next one.
 */
const MAX_BATCH = 32;
const BATCHES_IN_FLIGHT = 1;

interface Pending {
  id: string;
  decision: Decision;
  at: number;
}

/**
 * Settles a batch of decided messages and applies the outcomes of those still `received`, in one
 * transaction with one statement per kind of write. A batch that fails as a whole (a provider's repeat
 * meeting the applied-once index, say) is run again one message at a time by the batcher.
 */
async function applyBatch(deps: InboundDeps, items: Pending[]): Promise<(Applied | null)[]> {
  const at = Math.max(...items.map((p) => p.at));
  const out = await deps.db.transaction(async (trx) => {
    const still = await inboundRepository(trx).settleMany(
      items.map((p) => ({ id: p.id, result: settled(p.decision) })),
      at,
    );
    const out: (Applied | null)[] = items.map(() => null);
    const go = items.flatMap((p, i) => (p.decision.status === 'applied' && still.has(p.id) ? [{ i, d: p.decision, p }] : []));
    const applied = await applyOutcomes(
      trx,
      deps.config,
      go.map(({ d, p }) => ({ thread: d.thread, outcome: d.outcome, ref: { id: p.id, at: p.at } })),
    );
    go.forEach(({ i }, n) => {
      out[i] = applied[n]!;
    });
    return out;
  });
  // After commit: the batch's wake turns, one drain job per account.
  await afterApplied(deps, ...out.filter((a): a is Applied => a !== null));
  return out;
}

const batchers = new WeakMap<object, Batcher<Pending, Applied | null>>();
/** One batcher per database handle (a process has one; each test world its own). */
function batcherFor(deps: InboundDeps): Batcher<Pending, Applied | null> {
  let b = batchers.get(deps.db);
  if (!b) {
    b = createBatcher((items) => applyBatch(deps, items), { maxBatch: MAX_BATCH, maxInFlight: BATCHES_IN_FLIGHT });
    batchers.set(deps.db, b);
  }
  return b;
}

/**
 * Reads made by messages processed together, gathered into one query each (as the writes are): the
 * stored rows, and the threads their reply tokens and thread headers name. A lone message reads at once.
 */
interface Loaders {
  /** Status and size first (cheap), so the raw bytes are read only within the byte budget. */
  meta: Batcher<string, { status: string; size: number } | null>;
  row: Batcher<string, (InboundMessage & { raw: Buffer }) | null>;
  threads: ThreadLookup;
  budget: ReturnType<typeof createByteBudget>;
}

/** Raw mail one process parses at once, in multiples of INBOUND_MAX_BYTES (in flight: INBOUND_MAIL_CONCURRENCY). */
const PARSE_BUDGET_MESSAGES = 4;

const loaders = new WeakMap<object, Loaders>();
function loadersFor(deps: InboundDeps): Loaders {
  let l = loaders.get(deps.db);
  if (l) return l;
  const opts = { maxBatch: MAX_BATCH, maxInFlight: BATCHES_IN_FLIGHT };
  const threads = threadsRepository(deps.db);
  const meta = createBatcher(async (ids: string[]) => {
    const found = await inboundRepository(deps.db).statusAndSize(ids);
    return ids.map((id) => found.get(id) ?? null);
  }, opts);
  const row = createBatcher(async (ids: string[]) => {
    const found = await inboundRepository(deps.db).withRawMany(ids);
    return ids.map((id) => found.get(id) ?? null);
  }, opts);
  const token = createBatcher(async (tokens: string[]) => {
    const found = new Map((await threads.byTokens(tokens)).map((t) => [t.tokenHash, t]));
    return tokens.map((t) => found.get(hashReplyToken(t)) ?? null);
  }, opts);
  const messageIds = createBatcher(async (lists: string[][]) => {
    const found = await threads.byMessageIds([...new Set(lists.flat())]);
    return lists.map((ids) => found.filter((t) => ids.includes(t.messageId)));
  }, opts);
  l = {
    meta,
    budget: createByteBudget(PARSE_BUDGET_MESSAGES * deps.config.inbound.maxBytes),
    row,
    threads: {
      byToken: (t) => token.submit(t),
      byTokens: (ts) => threads.byTokens(ts),
      byMessageIds: (ids) => (ids.length ? messageIds.submit(ids) : Promise.resolve([])),
      latestTo: (accountId, address) => threads.latestTo(accountId, address),
    },
  };
  loaders.set(deps.db, l);
  return l;
}

const isUniqueViolation = (err: unknown, constraint: string) =>
  (err as { code?: string; constraint?: string }).code === '23505' && (err as { constraint?: string }).constraint === constraint;

/** How a message matched, what proves it answers our mail (null: nothing), and the sender check when it decided. */
interface Evidence {
  matchedBy: MatchedBy;
  proof: Proof | null;
  senderAuth?: SenderAuth;
}

type Decision =
  | ({ status: 'applied'; thread: Thread; outcome: Outcome; rule: string; headerMessageId: string | null } & Evidence)
  | { status: 'unplaced' | 'malformed'; reason: string; kind?: Outcome['kind']; rule?: string; evidence?: Evidence };

/** Why a report or automatic message matched by address alone is kept aside. */
export const UNPROVEN =
  'matched by its sender address only, with no reply token or Message-ID of ours and no trusted sender authentication: changes nothing';

/**
 * Everything that needs no lock: parse, classify, match, and (for a human reply) the reply's kind, which
 * may ask the model. Reads only; nothing here changes a row, so a retry repeats it harmlessly.
 */
async function decide(deps: InboundDeps, row: InboundMessage & { raw: Buffer }): Promise<Decision> {
  const { config } = deps;
  const domain = config.inbound.domain;
  const read = await readMail(row.raw, row.rcptTo, domain);
  if (!read.ok) return { status: 'malformed', reason: read.reason };
  const { mail, tokens, verdict, report, matchedAddress } = read.read;
  // Stored under its account (the token it was sent to, the inbound URL, or what the listener placed it by):
  // matched within that account only, by the account's latest mail to its sender when nothing else names a send.
  const match = await matchMail(
    loadersFor(deps).threads,
    {
      domain,
      accountId: row.accountId,
      tokens,
      report,
      bounce: verdict.kind === 'bounce',
      bounceRecipient: verdict.bounce?.recipient ?? null,
    },
    mail,
  );
  if (!match.ok) return { status: 'unplaced', reason: match.reason, kind: verdict.kind, rule: verdict.rule };
  // Mail matched by address alone is believed only as far as its sender is authenticated (provider's or our own check).
  const senderAuth = match.matchedBy === 'sender' ? await senderAuthOf(config, row, mail) : null;
  const evidence: Evidence = {
    matchedBy: match.matchedBy,
    proof: proofOf(match.matchedBy, matchedAddress, senderAuth),
    ...(senderAuth ? { senderAuth } : {}),
  };
  // Unproven, a bounce, complaint or automatic reply changes nothing; a human reply is at most shown to a person.
  if (!evidence.proof && verdict.kind !== 'reply')
    return { status: 'unplaced', reason: UNPROVEN, kind: verdict.kind, rule: verdict.rule, evidence };
  const outcome: Outcome = {
    kind: verdict.kind,
    bounce: verdict.bounce,
    subject: mail.subject,
    ...(evidence.proof ? {} : { unverified: true }),
  };
  let rule = verdict.rule;
  if (verdict.kind === 'reply') {
    const mayAsk = classifierBudget(deps, match.thread.accountId);
    const reply = await classifyReply(config.agent, verdict.newText, mail.subject, { mayAsk });
    outcome.replyKind = reply.replyKind;
    outcome.declineReason = reply.declineReason;
    outcome.text = verdict.newText;
    outcome.messageId = mail.messageId;
    outcome.references = mail.references.length ? mail.references : mail.inReplyTo;
    rule = `${rule}; ${reply.rule}`;
  }
  const byOther = removalByOther(outcome, mail.from, match.thread.to);
  if (byOther) {
    outcome.requestedBy = byOther;
    rule = `${rule}; removal asked by another sender than the recipient`;
  }
  return { status: 'applied', thread: match.thread, outcome, ...evidence, rule, headerMessageId: mail.messageId };
}

/** The evidence kept on the row (details): how it matched, its proof (`none` when it had none), the sender check. */
const evidenceDetails = (e: Evidence) => ({
  matchedBy: e.matchedBy,
  proof: e.proof ?? 'none',
  ...(e.senderAuth ? { senderAuth: e.senderAuth } : {}),
});

function settled(d: Decision): InboundResult {
  if (d.status !== 'applied') {
    const details = { ...(d.rule ? { rule: d.rule } : {}), ...(d.evidence ? evidenceDetails(d.evidence) : {}) };
    return { status: d.status, reason: d.reason, kind: d.kind ?? null, details: Object.keys(details).length ? details : null };
  }
  return {
    status: 'applied',
    kind: d.outcome.kind,
    replyKind: d.outcome.replyKind ?? null,
    sendId: d.thread.sendId,
    leadId: d.thread.leadId,
    headerMessageId: d.headerMessageId,
    details: {
      ...evidenceDetails(d),
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
 * same commit, together with the other messages being processed at that moment (group commit; reads are
 * gathered the same way). A provider's repeat (same account and Message-ID as an applied message) settles
 * as `duplicate`: a unique index lets only one of them be `applied`. A client's bad mail never throws: it
 * is kept as `malformed` or `unplaced` with a reason; only infrastructure errors throw (the job retries them).
 */
export async function processInbound(deps: InboundDeps, id: string): Promise<void> {
  const repo = inboundRepository(deps.db);
  const l = loadersFor(deps);
  const meta = await l.meta.submit(id);
  if (meta?.status !== 'received') return;
  const decision = await l.budget.hold(meta.size, async () => {
    const row = await l.row.submit(id);
    return row?.status === 'received' ? decide(deps, row) : null;
  });
  if (!decision) return;
  const at = Date.now();
  // The class counted: an applied message's kind (reply, bounce, …), else how it settled (unplaced, malformed, duplicate).
  let settledAs: string = decision.status === 'applied' ? decision.outcome.kind : decision.status;
  try {
    await batcherFor(deps).submit({ id, decision, at });
  } catch (err) {
    // A provider's repeat of a message already applied (same account and Message-ID): kept, not applied twice.
    if (decision.status !== 'applied' || !isUniqueViolation(err, 'inbound_messages_applied_once')) throw err;
    settledAs = 'duplicate';
    const earlier = await repo.appliedWithHeaderId(decision.thread.accountId, decision.headerMessageId ?? '', id);
    await repo.settle(
      id,
      {
        status: 'duplicate',
        reason: `the same message (Message-ID) was applied as ${earlier ?? 'an earlier message'}`,
        kind: decision.outcome.kind,
        sendId: decision.thread.sendId,
        headerMessageId: decision.headerMessageId,
      },
      at,
    );
  }
  metrics.inboundMail.inc({ class: word(settledAs) });
  deps.logger.info(
    {
      inboundId: id,
      status: decision.status,
      kind: decision.status === 'applied' ? decision.outcome.kind : (decision.kind ?? null),
      proof: decision.status === 'applied' ? (decision.proof ?? 'none') : undefined,
    },
    'inbound message processed',
  );
}
