import { z } from 'zod';
import { cannotShip, type ShippingHere } from '../channels/registry.js';
import { addToBlocklist, isBlocked } from '../blocklist/blocklist.service.js';
import type { Db, Queryable } from '../db.js';
import { BadRequest } from '../errors.js';
import { upsertLead } from '../leads/leads.service.js';
import { newId } from '../ids.js';
import { needsApproval, KINDS_OF_WORK, type KindOfWork } from '../review/approval.service.js';
import { cardShape, fileWork, workCard } from './file-work.js';
import { kindOfWorkFor } from '../review/cards/card-shape.js';
import { addCard } from '../review/cards/doors.js';
import { laterRepliesNote } from './reply-wakes.js';
import { outboundTexts, privateTextIn } from '../review/cards/private-text.js';
import { type ToolCall, ToolRefused, type ToolResult } from './brain.js';
import type { Config } from '../config.js';
import { refuseUnbackedClaim } from './claims.js';
import { EXPERIMENT_TOOL_ARGS, EXPERIMENT_TOOL_DESCRIPTIONS, experimentHandlers, withAdoptedDefaults } from './experiment-tools.js';
import { followUpsProblem } from '../mail/sequence-steps.js';
import { memoryNotesRepository } from '../memory/memory-notes.repository.js';
import type { Turn } from './agent.types.js';
import { turnsRepository } from './turns.repository.js';

/** Kinds of work the `ship` tool files directly. */
const SHIPPABLE = KINDS_OF_WORK.filter((k) => k !== 'experiment') as [
  Exclude<KindOfWork, 'experiment'>,
  ...Exclude<KindOfWork, 'experiment'>[],
];

const text = (max: number) => z.string().trim().min(1).max(max);

/** Scheduled wakes: from one minute to 90 days ahead, and at most this many waiting per account. */
export const WAKE_MIN_HOURS = 1 / 60;
export const WAKE_MAX_DAYS = 90;
export const MAX_PENDING_WAKES = 20;

/** Each tool's argument schema, defined once: the runtime validates with it, the LLM brain is shown its JSON schema. */
export const TOOL_ARGS = {
  reply: z.object({ text: text(4_000) }),
  create_card: z.object({
    kind: z.enum(['approval', 'question', 'choice']).default('approval'),
    sourceType: z.string().regex(/^[a-z][a-z0-9_]{1,40}$/),
    title: text(200),
    summary: z.string().max(2_000).optional(),
    prompt: z.string().max(2_000).optional(),
    options: z.array(z.string().max(200)).max(10).optional(),
    payload: z.record(z.string(), z.unknown()).default({}),
  }),
  ship: z.object({
    // An experiment is proposed with its plan (propose_experiment), never shipped bare.
    work: z.enum(SHIPPABLE),
    title: text(200),
    to: z.string().max(320).optional(),
    subject: z.string().max(16_000).optional(),
    body: z.string().max(16_000).optional(),
    amount: z.number().nonnegative().optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
  upsert_lead: z.object({
    domain: z.string().min(3).max(253),
    companyName: z.string().max(200).optional(),
    research: z
      .array(
        z.object({
          key: z.string().min(1).max(120),
          reasoning: z.string().max(8_000),
          sources: z
            .array(z.object({ url: z.string(), title: z.string() }))
            .max(20)
            .optional(),
        }),
      )
      .max(20)
      .optional(),
    contacts: z
      .array(
        z.object({
          name: z.string().max(200).optional(),
          email: z.string().max(320).optional(),
          title: z.string().max(200).optional(),
          profileUrl: z.string().max(2_048).optional(),
        }),
      )
      .max(50)
      .optional(),
  }),
  propose_workflow: z.object({
    name: text(120),
    scheduleText: text(200),
    description: z.string().max(240).optional(),
    steps: z
      .array(z.object({ title: text(200), details: z.string().max(2_000).optional() }))
      .min(1)
      .max(25),
  }),
  remember: z.object({ text: text(1_000) }),
  block: z.object({ value: z.string().min(3).max(320), reason: z.string().max(500).optional() }),
  schedule_wake: z.object({
    note: text(500),
    inHours: z
      .number()
      .min(WAKE_MIN_HOURS)
      .max(WAKE_MAX_DAYS * 24),
  }),
  ...EXPERIMENT_TOOL_ARGS,
} as const;

/** What the ship tool can do on this account now, from the channel registry (never a fixed list). */
function shipDescription(here: ShippingHere): string {
  // Only the kinds this tool files (an experiment is proposed with propose_experiment).
  const ships = here.ships.filter((k) => (SHIPPABLE as readonly string[]).includes(k));
  const can = ships.length
    ? `Kinds that can ship on this account now: ${ships.join(', ')}.`
    : 'No kind of work can ship on this account now.';
  const cannot = here.waits
    .filter((w) => (SHIPPABLE as readonly string[]).includes(w.kind))
    .map((w) => `${w.kind} (${w.reason})`)
    .join('; ');
  return (
    `Ship work (${SHIPPABLE.join(', ')}). It waits as a review card unless the account lets that kind run without ` +
    `approval; spend always waits. ` +
    'A blog_post: subject is its title, body its Markdown; details may carry excerpt, tags, author, the slug of a post ' +
    "to update, and op 'unpublish' (with that slug) to take it down. A network_message: to is a profile URL " +
    "(https://www.linkedin.com/in/<slug>), body the message; details.mode 'connect' makes it a connection request instead. " +
    `${can}${cannot ? ` Not here: ${cannot}; such a card waits and cannot be approved until the connection exists.` : ''}`
  );
}

/** Each tool's description for this account (the ship tool's depends on which channels are connected). */
export function toolDescriptions(here: ShippingHere): Record<keyof typeof TOOL_ARGS, string> {
  return { ...TOOL_DESCRIPTIONS, ship: shipDescription(here) };
}

const TOOL_DESCRIPTIONS: Record<Exclude<keyof typeof TOOL_ARGS, 'ship'>, string> = {
  reply: 'Send one chat bubble to the person who messaged you.',
  create_card: 'Put a card in the review queue (a question, a choice or something to approve).',
  upsert_lead: 'Record or update a lead by domain, with research entries and contacts.',
  propose_workflow: 'Propose a recurring workflow; it waits for approval as a card.',
  remember: 'Keep a preference or fact in the account memory.',
  block: 'Add a domain or email address to the do-not-contact block list.',
  schedule_wake:
    `Wake yourself later to check back on something (note: what to check). From one minute to ${WAKE_MAX_DAYS} days ahead; ` +
    `at most ${MAX_PENDING_WAKES} wakes wait per account.`,
  ...EXPERIMENT_TOOL_DESCRIPTIONS,
};

export interface ToolEnv {
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
  /** The workflows' door for `propose_workflow`, handed in by the process that runs turns (`AgentDoors`). */
  proposeWorkflow?: ProposeWorkflow;
}

/** Records a workflow the agent proposes, paused, on the step's transaction (src/workflows/, `insertWorkflow`). */
export type ProposeWorkflow = (
  q: Queryable,
  accountId: string,
  input: z.output<typeof TOOL_ARGS.propose_workflow>,
) => Promise<{ id: string; scheduleEcho: string | null }>;

/**
 * The doors of areas standing above the agent (docs/decisions/code-structure.md, "Areas and their layers") that its
 * tools use: whoever runs turns passes them to `drainAccount` (workers/agent-turns.ts builds them), so a process
 * cannot run turns without them. Nothing is wired when a module loads.
 */
export interface AgentDoors {
  proposeWorkflow: ProposeWorkflow;
}

/** Work that would show the account's private notes to outsiders is refused back to the brain, and no card is made. */
async function refusePrivateText(env: ToolEnv, texts: string[]): Promise<void> {
  const quotes = await privateTextIn(env.db, env.accountId, texts);
  if (quotes) throw new ToolRefused(`the draft ${quotes}, so no card was made; write it in your own words`);
}

/** Files the ship tool's work as a card (or ships it by the account's setting) and says which. */
async function shipWork(args: z.output<typeof TOOL_ARGS.ship>, env: ToolEnv): Promise<string> {
  // Nobody on the block list is ever drafted to (the send path checks again at send time).
  if (args.to !== undefined && (await isBlocked(env.db, env.accountId, args.to))) {
    throw new ToolRefused(`${args.to} is on the block list, so nothing was drafted to it`);
  }
  if (args.work === 'sequence') {
    const problem = args.to ? followUpsProblem(args.details ?? {}) : 'a sequence needs `to`';
    if (problem) throw new ToolRefused(`not a valid sequence (${problem}), so nothing was drafted`);
  }
  const approval = await needsApproval(env.db, env.accountId, args.work);
  const work = { accountId: env.accountId, turnId: env.turnId, fromOutside: env.fromOutside, ...args };
  await refusePrivateText(env, outboundTexts(workCard(work, approval)));
  const missing = await cannotShip(env.db, env.accountId, args.work);
  const prompt = (needs: boolean) =>
    laterRepliesNote(env, needs ? 'Review before it ships.' : 'This account lets this kind of work run without approval.');
  const { card } = await fileWork(env.db, { ...work, prompt }, approval);
  // Freed by the account setting: the review queue ships it through its fenced send path, decided by `setting`.
  if (!approval) {
    if (card.autoResolveAt !== null) return `${args.work} runs without approval on this account; card ${card.id} ships it now`;
    if (card.fromOutside) return `${args.work} came from outside data, so it waits for review as card ${card.id}; nothing was shipped`;
  }
  if (missing) return `${args.work} waits as card ${card.id} and cannot ship until connected (${missing}); nothing was shipped`;
  return `${args.work} is waiting for review as card ${card.id}; nothing was shipped`;
}

type Handler<K extends keyof typeof TOOL_ARGS> = (args: z.output<(typeof TOOL_ARGS)[K]>, env: ToolEnv) => Promise<string>;

/**
 * The tools the runtime executes for a brain. Nothing here ships: shipping work becomes a review card,
 * which the review queue ships through the kind's channel adapter (src/channels/) once approved or due.
 */
const handlers: { [K in keyof typeof TOOL_ARGS]: Handler<K> } = {
  async reply(args, env) {
    await env.onReply(args.text);
    return 'sent';
  },
  async create_card(args, env) {
    refuseUnbackedClaim([args.title, args.summary, args.prompt], args.payload);
    const shape = { sourceType: args.sourceType, title: args.title, payload: args.payload };
    if (kindOfWorkFor(shape)) await refusePrivateText(env, outboundTexts(shape));
    const card = await addCard(env.db, {
      id: newId('card'),
      accountId: env.accountId,
      kind: args.kind,
      sourceType: args.sourceType,
      title: args.title,
      summary: args.summary ?? '',
      ...(await laterRepliesNote(env, args.prompt ?? '')),
      options: args.options ?? null,
      payload: args.payload,
      turnId: env.turnId,
      fromOutside: env.fromOutside,
      ...cardShape(args.kind, args.sourceType),
    });
    return `card ${card.id} is waiting in the review queue`;
  },
  async ship(given, env) {
    // A mail about a topic an experiment decided starts from its adopted default, and the result says so.
    const { args, used } = await withAdoptedDefaults(env, given);
    refuseUnbackedClaim([args.subject ? args.title.replace(args.subject, '') : args.title], args.details ?? {});
    return `${await shipWork(args, env)}${used}`;
  },
  async upsert_lead(args, env) {
    try {
      const { id, created } = await upsertLead(env.db, env.accountId, {
        domain: args.domain,
        companyName: args.companyName,
        research: args.research?.map((r) => ({ key: r.key, reasoning: r.reasoning, sources: r.sources ?? [] })),
        contacts: args.contacts,
      });
      return `lead ${id} ${created ? 'recorded' : 'updated'}`;
    } catch (err) {
      if (err instanceof BadRequest) return `not recorded: ${err.error}`;
      throw err;
    }
  },
  async propose_workflow(args, env) {
    // Created paused: it runs only once a person accepts it (resume, or approving this card).
    if (!env.proposeWorkflow) throw new Error("propose_workflow needs the workflows' door (AgentDoors), passed by whoever runs the turn");
    const workflow = await env.proposeWorkflow(env.db, env.accountId, args);
    const card = await addCard(env.db, {
      id: newId('card'),
      accountId: env.accountId,
      kind: 'approval',
      sourceType: 'workflow_proposal',
      title: `Workflow: ${args.name}`,
      summary: `${args.name} (${workflow.scheduleEcho ?? args.scheduleText})`,
      prompt: 'Approve to make this workflow live.',
      payload: { workflowId: workflow.id, workflow: args },
      turnId: env.turnId,
      fromOutside: env.fromOutside,
      ...cardShape('approval', 'workflow_proposal'),
    });
    return `workflow ${workflow.id} is proposed (paused) and waits for approval as card ${card.id}`;
  },
  async remember(args, env) {
    await memoryNotesRepository(env.db).remember(env.accountId, args.text, env.turnId, Date.now());
    return 'kept in memory';
  },
  async block(args, env) {
    const r = await addToBlocklist(env.db, env.accountId, [{ value: args.value, reason: args.reason ?? null }], 'agent', 'agent');
    if (r.invalid.length) return `${args.value} is not a domain, an email or a profile URL; nothing was blocked`;
    return r.added ? `${args.value} is now on the block list` : `${args.value} was already on the block list`;
  },
  async schedule_wake(args, env) {
    const turns = turnsRepository(env.db);
    const pending = (await turns.waitingWakes(env.accountId)).count;
    if (pending >= MAX_PENDING_WAKES) {
      throw new ToolRefused(`${pending} wakes are already waiting on this account (at most ${MAX_PENDING_WAKES}); none was scheduled`);
    }
    const at = Date.now();
    const notBefore = at + Math.round(args.inHours * 3_600_000);
    const [turn] = await turns.insertMany([
      {
        id: newId('turn'),
        accountId: env.accountId,
        kind: 'wake',
        origin: 'agent',
        tokenId: null,
        clientRequestId: null,
        text: `Check back: ${args.note}`,
        data: null,
        mode: 'queue',
        createdAt: at,
        notBefore,
        expiresAt: null,
      },
    ]);
    env.onWake?.(turn!);
    return `wake ${turn!.id} scheduled for ${new Date(notBefore).toISOString()}`;
  },
  ...experimentHandlers,
};

/** Validates and runs one tool call. Unknown tools and bad arguments are reported back, never thrown. */
export async function executeTool(call: ToolCall, env: ToolEnv): Promise<ToolResult> {
  const name = call.name as keyof typeof TOOL_ARGS;
  const schema = TOOL_ARGS[name];
  if (!schema) return { id: call.id, name: call.name, ok: false, result: `unknown tool ${call.name}` };
  const parsed = schema.safeParse(call.args);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      id: call.id,
      name: call.name,
      ok: false,
      result: `bad arguments: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    };
  }
  const handler = handlers[name] as Handler<typeof name>;
  try {
    const result = await handler(parsed.data as never, env);
    return { id: call.id, name: call.name, ok: true, result };
  } catch (err) {
    if (err instanceof ToolRefused) return { id: call.id, name: call.name, ok: false, result: err.message };
    throw err;
  }
}
