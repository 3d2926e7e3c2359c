import { z } from 'zod';
import type { Config } from '../../config.js';
import { REPLY_KINDS, type ReplyKind } from '../../leads/leads.types.js';
import { DATA_RULE, dataBlock } from '../core/data-block.js';
import { DEFAULT_DECLINE_REASON, replyByRules, type ReplyVerdict } from './reply-rules.js';
import { inSpan, SpanKind } from '../../tracing/spans.js';

export type { ReplyVerdict } from './reply-rules.js';

/** Kinds the model may answer: every reply kind but `out_of_office` (an automatic reply is never a human reply). */
const MODEL_KINDS = REPLY_KINDS.filter((k) => k !== 'out_of_office') as Exclude<ReplyKind, 'out_of_office'>[];

const Verdict = z.object({ replyKind: z.enum(MODEL_KINDS as [ReplyKind, ...ReplyKind[]]) });

const ChatAnswer = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string().nullish() }) })).min(1),
});

/** Characters of reply text the model is shown (the new text of a reply is short; the rest is noise). */
const MODEL_TEXT_MAX = 4_000;

const SYSTEM = [
  'You classify one reply to an outreach message (an email, or a message on a professional network).',
  'Answer with JSON only: {"replyKind": "<kind>"}, where <kind> is one of:',
  'interested (wants to talk, a call, a demo, more information), question (asks something, no clear interest yet),',
  'referral (points to another person to contact), not_now (maybe later: timing, budget, next quarter),',
  'not_interested (declines), wrong_person (not the right contact, left the company, and names nobody else),',
  'unsubscribe (asks to stop receiving messages or to be removed), other (none of these).',
  DATA_RULE,
].join(' ');

/** The first JSON object in the model's content (models wrap JSON in prose or a code fence). */
function firstObject(content: string): unknown {
  const start = content.indexOf('{');
  const end = content.lastIndexOf('}');
  if (start < 0 || end <= start) return null;
  try {
    return JSON.parse(content.slice(start, end + 1));
  } catch {
    return null;
  }
}

type Answer = { ok: true; kind: ReplyKind } | { ok: false; why: string };

async function askModel(cfg: Config['agent']['llm'], text: string, subject: string | null, fetchImpl: typeof fetch): Promise<Answer> {
  const content = { ...(subject === null ? {} : { subject }), text: text.slice(0, MODEL_TEXT_MAX) };
  const data = dataBlock({ label: subject === null ? 'network reply' : 'mail reply', content });
  let res: Response;
  try {
    res = await fetchImpl(`${cfg.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
      body: JSON.stringify({
        model: cfg.model,
        temperature: 0,
        messages: [
          { role: 'system', content: SYSTEM },
          {
            role: 'user',
            content: `Classify this reply.\n\n${data}`,
          },
        ],
      }),
      signal: AbortSignal.timeout(cfg.timeoutMs),
    });
  } catch (err) {
    return { ok: false, why: (err as Error).name === 'TimeoutError' ? `timed out after ${cfg.timeoutMs} ms` : 'could not be reached' };
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => undefined);
    return { ok: false, why: `answered HTTP ${res.status}` };
  }
  const body = ChatAnswer.safeParse(await res.json().catch(() => null));
  if (!body.success) return { ok: false, why: 'sent no message' };
  const verdict = Verdict.safeParse(firstObject(body.data.choices[0]!.message.content ?? ''));
  if (!verdict.success) return { ok: false, why: 'answered no known reply kind' };
  return { ok: true, kind: verdict.data.replyKind };
}

/**
 * What a human reply means: a mail reply with its subject, or a reply on a professional network
 * (`subject` null: such a message has none). The offline brain uses the rule table; the llm brain asks the model once,
 * within its timeout, with the reply as outside data (rule 8), and falls back to the rules on any
 * failure or an answer that is not one of the kinds. Never throws; `declineReason` is always ours.
 * `mayAsk` is the account's model budget (model-budget.ts): when it says no, the rules judge and say why.
 */
export async function classifyReply(
  agent: Pick<Config['agent'], 'brain' | 'llm'>,
  text: string,
  subject: string | null,
  opts: { mayAsk?: () => Promise<boolean>; fetchImpl?: typeof fetch } = {},
): Promise<ReplyVerdict> {
  if (agent.brain !== 'llm') return replyByRules(text);
  if (opts.mayAsk && !(await opts.mayAsk())) {
    const rules = replyByRules(text);
    return { ...rules, rule: `${rules.rule} (the account's daily model budget is spent)` };
  }
  const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': agent.llm.model, 'gas.llm.purpose': 'reply_kind' };
  const answer = await inSpan(`chat ${agent.llm.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const got = await askModel(agent.llm, text, subject, opts.fetchImpl ?? fetch);
    if (!got.ok) span.setAttribute('error.type', 'model_answer');
    return got;
  });
  if (answer.ok) return { replyKind: answer.kind, declineReason: DEFAULT_DECLINE_REASON[answer.kind] ?? null, rule: 'llm' };
  const rules = replyByRules(text);
  return { ...rules, rule: `${rules.rule} (the model ${answer.why})` };
}
