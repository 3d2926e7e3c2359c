import { describe, expect } from 'vitest';
import { withAdoptedDefaults } from '../../src/experiments/adopted-defaults.js';
import { AGENT_TOOLS } from '../../src/agent/tools/catalog.js';
import { executeTool, type ToolContext, toolRegistry } from '../../src/agent/tools/tool.js';
import { insertWorkflow } from '../../src/workflows/workflows.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';
import { SCOREBOARD_SOURCES } from '../helpers/scoreboard.js';

/**
 * The agent's doors into areas above it are passed in by whoever runs the tools (AgentDoors), never set when a
 * module loads: this file imports no worker, and `propose_workflow` records through the door it is handed.
 */

const call = { id: 'c1', name: 'propose_workflow', args: { name: 'Weekly digest', scheduleText: 'weekly', steps: [{ title: 'sum up' }] } };
const toolEnv = (env: TestEnv, accountId: string) => ({
  db: env.deps.db,
  accountId,
  turnId: 'turn_doors',
  fromOutside: false,
  config: env.config,
  onReply: async () => undefined,
});

describe('the agent tools', () => {
  it('propose a workflow through the door they are given, paused, with a card to approve it', async ({ env }) => {
    const { accountId } = await env.tenant();
    const proposeWorkflow = (q: Parameters<typeof insertWorkflow>[0], a: string, input: Parameters<typeof insertWorkflow>[2]) =>
      insertWorkflow(q, a, input, { proposedByAgent: true });
    const doors = {
      tools: toolRegistry(AGENT_TOOLS),
      proposeWorkflow,
      adoptedDefaults: withAdoptedDefaults,
      scoreboard: SCOREBOARD_SOURCES,
    };
    const out = await executeTool(call, { ...toolEnv(env, accountId), doors });
    expect(out).toMatchObject({ ok: true, result: expect.stringMatching(/^workflow \S+ is proposed \(paused\)/) });
    const [w] = await rows(env, 'workflows', { account_id: accountId });
    expect(w).toMatchObject({ name: 'Weekly digest', status: 'paused' });
    expect(await rows(env, 'review_cards', { account_id: accountId, source_type: 'workflow_proposal' })).toHaveLength(1);
  });

  it('cannot be handed a context without the doors (the compiler refuses it), and such a call writes nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    // @ts-expect-error a tool's context carries the doors
    const missing: ToolContext = toolEnv(env, accountId);
    await expect(executeTool(call, missing)).rejects.toThrow(TypeError);
    expect(await rows(env, 'workflows', { account_id: accountId })).toHaveLength(0);
  });
});
