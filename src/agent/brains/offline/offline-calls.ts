import type { BrainContext, ToolCall } from '../../core/brain.js';

/** The offline brain's small helpers, shared by its planners. */
export const trimEnd = (s: string) =>
  s
    .trim()
    .replace(/[.!?]+$/, '')
    .trim();

export function call(n: number, name: string, args: Record<string, unknown>): ToolCall {
  return { id: `call_${n}`, name, args };
}

export function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** The body of the mail the offline brain drafts about a topic (a link the person named goes in as its own line). */
export function mailBody(greeting: string, topic: string, link: string | null = null): string {
  return [
    `Hi ${capitalise(greeting)},`,
    '',
    `I wanted to reach out about ${topic}.`,
    '',
    // A link the person named: it ships as a tracked link, so a click counts under email.
    ...(link ? [`There is more here: ${link}`, ''] : []),
    'Would you be open to a short call next week?',
    '',
    'Best regards',
  ].join('\n');
}

/**
 * One phrase the offline brain understands: how a person writes it, what it does, and its planner.
 * docs/agent.md's list of phrases is written from these (scripts/offline-phrases.ts).
 */
export interface OfflinePhrase {
  /** How a person writes it, the parts to fill in in capitals ("block DOMAIN"). */
  example: string;
  /** Other ways to write the same thing, listed beside the example. */
  variants?: readonly string[];
  /** How the reply to a message it does not understand names the phrase. */
  hint?: string;
  /** What it does, in a sentence for docs/agent.md. */
  does: string;
  pattern: RegExp;
  /** Matched against the text with trailing punctuation cut (`trimEnd`), not only trimmed. */
  cutEnd?: boolean;
  plan(m: RegExpExecArray, ctx: BrainContext): ToolCall[] | Promise<ToolCall[]>;
}
