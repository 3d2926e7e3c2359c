import type { ToolCall } from './brain.js';

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
