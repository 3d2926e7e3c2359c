import { setTimeout as sleep } from 'node:timers/promises';
import { metrics } from '../../../metrics/registry.js';
import { inSpan, SpanKind } from '../../../tracing/spans.js';
import { z } from 'zod';
import type { Config } from '../../../config.js';
import { BrainError, type Brain, type BrainContext, type BrainStep, type ToolCall, type ToolResult } from '../../core/brain.js';
import { DATA_RULE, dataBlock } from '../../core/data-block.js';
import type { ModelBudget } from './model-budget.js';
import type { ToolRegistry } from '../../tools/tool.js';

type LlmConfig = Config['agent']['llm'];

const SYNTHETIC = 'content-';

const ChatResponse = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({ id: z.string(), type: z.string().optional(), function: z.object({ name: z.string(), arguments: z.string() }) }),
            )
            .nullish(),
        }),
      }),
    )
    .min(1) /** What the call cost, when the service says (OpenAI-compatible `usage`). */,
  usage: z.object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() }).partial().nullish(),
});

type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | {
      role: 'assistant';
      content: string | null;
      tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
    }
  | { role: 'tool'; tool_call_id: string; content: string };

/** The tool list for this turn's account: the ship tool says which kinds of work can ship there now. */
async function toolsFor(tools: ToolRegistry, ctx: BrainContext) {
  return tools.listing(await ctx.shipping()).map(({ name, description, parameters }) => ({
    type: 'function' as const,
    function: { name, description, parameters },
  }));
}

async function systemPrompt(ctx: BrainContext): Promise<string> {
  const queue = await ctx.reviewQueue();
  const lines = [
    'You are the growth agent of a software business. You run go-to-market work through tools.',
    'Talk to the person with the reply tool or plain content. Nothing ships (mail, posts, network messages, ad tests, spend) ' +
      'except as a review card; use the ship tool for such work.',
    DATA_RULE,
  ];
  if (ctx.memory.length)
    lines.push(`Account memory (preferences the customer asked you to keep):\n${ctx.memory.map((m) => `- ${m}`).join('\n')}`);
  lines.push(
    `Review queue: ${queue.count} card(s) ` +
      `waiting${queue.waiting.length ? `: ${queue.waiting.map((c) => `${c.title} (${c.sourceType})`).join('; ')}` : ''}.`,
  );
  return lines.join('\n\n');
}

function userMessage(ctx: BrainContext): string {
  const { input } = ctx;
  const parts: string[] = [];
  if (input.kind === 'message') parts.push(input.text);
  else if (input.kind === 'event')
    parts.push(`An event arrived${input.data ? ` from ${input.data.label}` : ''}. Decide whether it warrants work or a message.`);
  else parts.push(`You woke for a ${input.kind.replace('_', ' ')}.${input.text ? ` ${input.text}` : ''}`);
  if (input.data) parts.push(dataBlock(input.data));
  return parts.join('\n\n');
}

/** The chat-completions conversation for this round: context, then every earlier round's calls and results. */
export async function buildMessages(ctx: BrainContext, transcript: { calls: ToolCall[]; results: ToolResult[] }[]): Promise<ChatMessage[]> {
  const messages: ChatMessage[] = [{ role: 'system', content: await systemPrompt(ctx) }];
  for (const h of await ctx.history())
    messages.push(h.role === 'user' ? { role: 'user', content: h.text } : { role: 'assistant', content: h.text });
  messages.push({ role: 'user', content: userMessage(ctx) });
  for (const round of transcript) {
    const content =
      round.calls
        .filter((c) => c.id.startsWith(SYNTHETIC))
        .map((c) => String(c.args.text ?? ''))
        .join('\n') || null;
    const real = round.calls.filter((c) => !c.id.startsWith(SYNTHETIC));
    messages.push({
      role: 'assistant',
      content,
      ...(real.length
        ? {
            tool_calls: real.map((c) => ({
              id: c.id,
              type: 'function' as const,
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          }
        : {}),
    });
    for (const c of real) {
      const r = round.results.find((x) => x.id === c.id);
      messages.push({
        role: 'tool',
        tool_call_id: c.id,
        content: r ? `${r.ok ? 'ok' : 'error'}: ${r.result}` : 'skipped: the turn ran out of steps',
      });
    }
  }
  return messages;
}

function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const s = Number(header);
  return Number.isFinite(s) && s >= 0 ? Math.min(s * 1000, 30_000) : null;
}

function parseArgs(raw: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * An OpenAI-compatible chat-completions brain with tool calling. Each call has a timeout; 429, 5xx,
 * timeouts and connection errors are retried with exponential backoff (Retry-After honoured);
 * anything else fails the turn with a short reason. With `budget`, each round first takes a call from
 * the account's daily budget (its retries are part of it); a spent budget fails the turn without a call.
 */
/**
 * One model call (its retries included) counted by outcome, timed, its tokens added from `usage`, and
 * traced as a `chat <model>` span (the model and token counts; never the prompt or the answer).
 */
async function measured(model: string, signal: AbortSignal, call: () => Promise<z.infer<typeof ChatResponse>>) {
  const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model };
  return inSpan(`chat ${model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    const end = metrics.llmDuration.startTimer({ model });
    try {
      const data = await call();
      metrics.llmCalls.inc({ model, outcome: 'ok' });
      if (data.usage?.prompt_tokens) metrics.llmTokens.inc({ model, kind: 'prompt' }, data.usage.prompt_tokens);
      if (data.usage?.completion_tokens) metrics.llmTokens.inc({ model, kind: 'completion' }, data.usage.completion_tokens);
      span.setAttributes({
        'gen_ai.usage.input_tokens': data.usage?.prompt_tokens ?? 0,
        'gen_ai.usage.output_tokens': data.usage?.completion_tokens ?? 0,
      });
      return data;
    } catch (err) {
      metrics.llmCalls.inc({ model, outcome: signal.aborted ? 'aborted' : 'error' });
      throw err;
    } finally {
      end();
    }
  });
}

/** The LLM brain, shown the tools of `tools` (the registry the process assembled). */
export function createLlmBrain(cfg: LlmConfig, tools: ToolRegistry, fetchImpl: typeof fetch = fetch, budget?: ModelBudget): Brain {
  async function complete(
    messages: ChatMessage[],
    listed: Awaited<ReturnType<typeof toolsFor>>,
    signal: AbortSignal,
  ): Promise<z.infer<typeof ChatResponse>> {
    let last = '';
    for (let attempt = 0; attempt <= cfg.maxRetries; attempt++) {
      if (attempt > 0) {
        const backoff = cfg.backoffMs * 2 ** (attempt - 1) * (0.8 + Math.random() * 0.4);
        await sleep(backoff, undefined, { signal }).catch(() => undefined);
      }
      if (signal.aborted) throw signal.reason ?? new Error('aborted');
      let res: Response;
      try {
        res = await fetchImpl(`${cfg.baseUrl}/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(cfg.apiKey ? { authorization: `Bearer ${cfg.apiKey}` } : {}) },
          body: JSON.stringify({ model: cfg.model, messages, tools: listed, tool_choice: 'auto' }),
          signal: AbortSignal.any([signal, AbortSignal.timeout(cfg.timeoutMs)]),
        });
      } catch (err) {
        if (signal.aborted) throw err;
        last = (err as Error).name === 'TimeoutError' ? `timed out after ${cfg.timeoutMs} ms` : 'could not be reached';
        continue;
      }
      if (res.status === 429 || res.status >= 500) {
        last = `answered HTTP ${res.status}`;
        await res.body?.cancel().catch(() => undefined);
        const wait = retryAfterMs(res.headers.get('retry-after'));
        if (wait !== null && attempt < cfg.maxRetries) await sleep(wait, undefined, { signal }).catch(() => undefined);
        continue;
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => undefined);
        throw new BrainError(`the language model refused the request (HTTP ${res.status})`);
      }
      let body: unknown;
      try {
        body = await res.json();
      } catch (err) {
        if (signal.aborted) throw err;
        last = 'sent a response that is not JSON';
        continue;
      }
      const parsed = ChatResponse.safeParse(body);
      if (!parsed.success) throw new BrainError('the language model sent a response without a message');
      return parsed.data;
    }
    throw new BrainError(`the language model ${last} (${cfg.maxRetries + 1} attempts)`);
  }

  return {
    name: 'llm',
    async step(ctx, transcript, signal): Promise<BrainStep> {
      // The account's daily budget: once spent, the model is not called (the refusal keeps what it can).
      if (budget && !(await budget.take(ctx.accountId))) {
        throw new BrainError(await budget.refused(ctx.accountId, ctx.turnId, transcript.length === 0));
      }
      const data = await measured(cfg.model, signal, async () =>
        complete(await buildMessages(ctx, transcript), await toolsFor(tools, ctx), signal),
      );
      const message = data.choices[0]!.message;
      const calls: ToolCall[] = [];
      if (message.content?.trim())
        calls.push({ id: `${SYNTHETIC}${transcript.length}`, name: 'reply', args: { text: message.content.trim() } });
      for (const tc of message.tool_calls ?? []) calls.push({ id: tc.id, name: tc.function.name, args: parseArgs(tc.function.arguments) });
      const done = !(message.tool_calls ?? []).length;
      return { calls, done };
    },
  };
}
