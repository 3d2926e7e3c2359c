import type { ShippingHere } from '../../channels/registry.js';
import type { OutsideData, TurnKind } from './agent.types.js';

export interface ToolCall {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

export interface ToolResult {
  id: string;
  name: string;
  ok: boolean;
  /** A short sentence the brain reads back (LLM tool message). */
  result: string;
}

/** What a brain sees. Outside data is only ever in `input.data`, rendered as a data block. */
export interface BrainContext {
  accountId: string;
  /** The turn being run (the model-call budget keeps a turned-away input by it). */
  turnId?: string;
  input: { kind: TurnKind; text: string; data: OutsideData | null };
  memory: string[];
  /** Loaded on first call (a brain that does not need them costs no query). */
  history(): Promise<{ role: 'user' | 'agent'; text: string }[]>;
  reviewQueue(): Promise<{ waiting: { title: string; sourceType: string; createdAt: number }[]; count: number }>;
  /** Which kinds of work can ship on this account now (the channel registry's answer). */
  shipping(): Promise<ShippingHere>;
}

/** One round: the tool calls the brain proposes, and whether it has finished the turn. */
export interface BrainStep {
  calls: ToolCall[];
  done: boolean;
}

/** The brain proposes; the runtime disposes (executes the calls under the approval rules). */
export interface Brain {
  readonly name: 'offline' | 'llm';
  step(ctx: BrainContext, transcript: { calls: ToolCall[]; results: ToolResult[] }[], signal: AbortSignal): Promise<BrainStep>;
}

/** A brain failure the turn reports as its `failure` (no internals). */
export class BrainError extends Error {}

/** A tool's settled refusal, reported back to the brain as a failed call (never a crashed turn). */
export class ToolRefused extends Error {}
