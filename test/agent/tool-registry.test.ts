import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EXPERIMENT_TOOLS } from '../../src/agent/experiments/tools.js';
import { AGENT_TOOLS } from '../../src/agent/tools/catalog.js';
import { defineTool, toolCatalog, toolRegistry } from '../../src/agent/tools/tool.js';
import { agentDoors } from '../../workers/agent-turns.js';

const echo = defineTool({
  name: 'echo',
  description: 'Say it back.',
  input: z.object({ text: z.string() }),
  handler: async (args) => args.text,
});

describe('the tool registry', () => {
  it("is assembled by the process that runs turns from the agent's tools and the experiments'", () => {
    expect(agentDoors.tools.names).toEqual([...Object.keys(AGENT_TOOLS), ...Object.keys(EXPERIMENT_TOOLS)]);
    expect(agentDoors.tools.names).toEqual([
      'reply',
      'create_card',
      'ship',
      'upsert_lead',
      'propose_workflow',
      'remember',
      'block',
      'schedule_wake',
      'propose_experiment',
      'read_results',
    ]);
  });

  it('stops at start-up on a name two catalogs both define, or a tool catalogued under another name', () => {
    expect(() => toolRegistry(AGENT_TOOLS, toolCatalog({ echo }), toolCatalog({ echo }))).toThrow('two tools are named echo');
    // @ts-expect-error a catalog's key must be its tool's own name
    const misnamed = toolCatalog({ shout: echo });
    expect(() => toolRegistry(misnamed)).toThrow('tool echo is catalogued as shout');
  });

  it('does not compile a tool without a handler', () => {
    // @ts-expect-error a tool needs its handler
    const broken = defineTool({ name: 'broken', description: 'No handler.', input: z.object({}) });
    expect(broken).not.toHaveProperty('handler');
  });

  it('shows each tool with its description for the account and its argument schema, and reports what it cannot run', async () => {
    const registry = toolRegistry(toolCatalog({ echo }), toolCatalog({ ship: AGENT_TOOLS.ship }));
    const listed = registry.listing({ ships: ['email'], waits: [{ kind: 'network_message', reason: 'not connected' }] });
    expect(listed.map((t) => t.name)).toEqual(['echo', 'ship']);
    expect(listed[0]).toMatchObject({ description: 'Say it back.', parameters: { type: 'object', required: ['text'] } });
    expect(listed[1]!.description).toContain('Kinds that can ship on this account now: email.');
    expect(listed[1]!.description).toContain('Not here: network_message (not connected)');
    const ctx = { doors: { ...agentDoors, tools: registry } } as never;
    expect(await registry.execute({ id: 'c1', name: 'echo', args: { text: 'hi' } }, ctx)).toEqual({
      id: 'c1',
      name: 'echo',
      ok: true,
      result: 'hi',
    });
    expect(await registry.execute({ id: 'c2', name: 'nope', args: {} }, ctx)).toMatchObject({ ok: false, result: 'unknown tool nope' });
    expect(await registry.execute({ id: 'c3', name: 'echo', args: { text: 3 } }, ctx)).toMatchObject({
      ok: false,
      result: expect.stringMatching(/^bad arguments: text /),
    });
  });
});
