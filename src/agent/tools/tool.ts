import { z } from 'zod';
import type { ShippingHere } from '../../channels/registry.js';
import type { Config } from '../../config.js';
import type { Db, Queryable } from '../../db.js';
import type { DraftArgs } from '../../experiments/adopted-defaults.js';
import type { ScoreboardSources } from '../../results/report/results.service.js';
import type { Turn } from '../core/agent.types.js';
import { type ToolCall, ToolRefused, type ToolResult } from '../core/brain.js';

/**
 * A tool the agent's brains can call (docs/agent.md, "Tools"): its name, what the brain is told of it, its argument
 * schema (the runtime validates with it, the LLM brain is shown its JSON schema) and its handler. One file per tool;
 * an area's tools are a catalog (`toolCatalog`), and the process that runs turns assembles the catalogs into the one
 * registry (`toolRegistry`) it hands to the turn runner. Nothing is wired when a module loads.
 */
export interface Tool<Name extends string = string, Input extends z.ZodType = z.ZodType> {
  readonly name: Name;
  /** What the brain is told; a function when it depends on the account (the ship tool's kinds that can ship now). */
  readonly description: string | ((here: ShippingHere) => string);
  readonly input: Input;
  /** Runs a call whose arguments passed `input`; answers a short sentence the brain reads back. */
  handler(args: z.output<Input>, ctx: ToolContext): Promise<string>;
}

/** A tool whose argument types were checked where it was defined. */
// biome-ignore lint/suspicious/noExplicitAny: the registry holds tools of every argument type.
export type AnyTool = Tool<string, any>;

/** Defines one tool; a tool without a name, description, schema or handler does not compile. */
export const defineTool = <const Name extends string, Input extends z.ZodType>(tool: Tool<Name, Input>): Tool<Name, Input> => tool;

/**
 * An area's tools keyed by name. Each key must be its tool's own name, and an object literal cannot name a key twice,
 * so a duplicate or a misnamed tool in one catalog does not compile.
 */
export type ToolCatalog<T extends Record<string, AnyTool> = Record<string, AnyTool>> = { readonly [K in keyof T]: T[K] & Tool<K & string> };
export const toolCatalog = <const T extends Record<string, AnyTool>>(tools: ToolCatalog<T>): ToolCatalog<T> => tools;

/** What a workflow the agent proposes carries (the propose_workflow tool's arguments). */
export interface WorkflowProposal {
  name: string;
  scheduleText: string;
  description?: string | undefined;
  steps: { title: string; details?: string | undefined }[];
}

/** Records a workflow the agent proposes, paused, on the step's transaction (src/workflows/, `insertWorkflow`). */
export type ProposeWorkflow = (
  q: Queryable,
  accountId: string,
  input: WorkflowProposal,
) => Promise<{ id: string; scheduleEcho: string | null }>;

/** The ship tool's arguments a mail's adopted defaults may change (declared by the experiments, which change them). */
export type { DraftArgs };

/** Work the ship tool files starts from the defaults decided experiments adopted; `used` is what its result adds. */
export type AdoptedDefaults = <A extends DraftArgs>(ctx: ToolContext, args: A) => Promise<{ args: A; used: string }>;

/**
 * What the process that runs turns hands the agent (workers/agent-turns.ts builds it): the assembled tool registry and
 * the doors of areas standing above the agent that its tools use (docs/decisions/code-structure.md, "Areas and their
 * layers"). A process cannot run turns without them.
 */
export interface AgentDoors {
  tools: ToolRegistry;
  /** The workflows' door for `propose_workflow`. */
  proposeWorkflow: ProposeWorkflow;
  /** The experiments' door for `ship`: defaults decided experiments adopted. */
  adoptedDefaults: AdoptedDefaults;
  /** What `read_results` hands the scoreboard of the areas above it (the agent's turns, workflow runs, inbound URLs). */
  scoreboard: ScoreboardSources;
}

export interface ToolContext {
  db: Db;
  accountId: string;
  turnId: string;
  /** The turn carries outside data (a webhook payload): what it makes never auto-resolves. */
  fromOutside: boolean;
  /** The settings `read_results` reads by (the reply window experiments count by; whether replies can come in). */
  config: Pick<Config, 'experiments' | 'inbound'>;
  /** Called for each `reply` bubble. */
  onReply(text: string): Promise<void>;
  /** Called for each wake scheduled, to queue it once the step commits. */
  onWake?(turn: Turn): void;
  doors: AgentDoors;
}

/** The tools a brain is shown for one account: name, description and the JSON schema of its arguments. */
export interface ToolListing {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolRegistry {
  readonly names: readonly string[];
  /** Validates and runs one call. Unknown tools, bad arguments and refusals are reported back, never thrown. */
  execute(call: ToolCall, ctx: ToolContext): Promise<ToolResult>;
  /** Every tool as the brain is shown it on an account where `here` can ship. */
  listing(here: ShippingHere): ToolListing[];
}

/** Assembles catalogs into the one registry; a name two catalogs both define stops the process at start-up. */
export function toolRegistry(...catalogs: ToolCatalog[]): ToolRegistry {
  const tools = new Map<string, AnyTool>();
  for (const catalog of catalogs) {
    for (const [key, tool] of Object.entries(catalog)) {
      if (key !== tool.name) throw new Error(`tool ${tool.name} is catalogued as ${key}`);
      if (tools.has(key)) throw new Error(`two tools are named ${key}`);
      tools.set(key, tool);
    }
  }
  const parameters = new Map([...tools].map(([name, t]) => [name, z.toJSONSchema(t.input, { io: 'input' }) as Record<string, unknown>]));
  return {
    names: [...tools.keys()],
    async execute(call, ctx) {
      const tool = tools.get(call.name);
      if (!tool) return { id: call.id, name: call.name, ok: false, result: `unknown tool ${call.name}` };
      const parsed = tool.input.safeParse(call.args);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const result = `bad arguments: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim();
        return { id: call.id, name: call.name, ok: false, result };
      }
      try {
        return { id: call.id, name: call.name, ok: true, result: await tool.handler(parsed.data, ctx) };
      } catch (err) {
        if (err instanceof ToolRefused) return { id: call.id, name: call.name, ok: false, result: err.message };
        throw err;
      }
    },
    listing(here) {
      return [...tools.values()].map((t) => ({
        name: t.name,
        description: typeof t.description === 'function' ? t.description(here) : t.description,
        parameters: parameters.get(t.name)!,
      }));
    },
  };
}

/** Runs one call through the registry the context carries. */
export async function executeTool(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
  return ctx.doors.tools.execute(call, ctx);
}

/** A string argument: trimmed, not empty, at most `max` characters. */
export const text = (max: number) => z.string().trim().min(1).max(max);
