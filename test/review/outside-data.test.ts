import { describe, expect } from 'vitest';
import { recordTurn } from '../../src/agent/messages/agent.service.js';
import { cardFromOutsideData, turnCarriesOutsideData } from '../../src/review/outside-data.js';
import { it } from '../helpers/fixture.js';

describe('outside data (DESIGN rule 8), decided once', () => {
  it('counts webhook events, hook-origin turns and turns that carry a data block', () => {
    const data = { label: 'x', content: {} };
    expect(turnCarriesOutsideData({ kind: 'event', origin: 'hook', data })).toBe(true);
    expect(turnCarriesOutsideData({ kind: 'event', origin: 'api', data: null })).toBe(true);
    expect(turnCarriesOutsideData({ kind: 'message', origin: 'hook', data: null })).toBe(true);
    expect(turnCarriesOutsideData({ kind: 'revision', origin: 'review', data })).toBe(true);
    expect(turnCarriesOutsideData({ kind: 'message', origin: 'api', data: null })).toBe(false);
    expect(turnCarriesOutsideData({ kind: 'workflow_run', origin: 'workflow', data: null })).toBe(false);
  });

  it('marks a card by its own flag or by the turn that made it', async ({ env }) => {
    const { accountId } = await env.tenant();
    const event = await recordTurn(env.deps.db, env.deps.config, {
      accountId,
      kind: 'event',
      origin: 'hook',
      text: '',
      data: { label: 'hook', content: { a: 1 } },
      mode: 'queue',
    });
    const message = await recordTurn(env.deps.db, env.deps.config, {
      accountId,
      kind: 'message',
      origin: 'api',
      text: 'hi',
      mode: 'queue',
    });
    expect(await cardFromOutsideData(env.deps.db, { accountId, turnId: event.turn.id }, env.deps.readTurn)).toBe(true);
    expect(await cardFromOutsideData(env.deps.db, { accountId, turnId: message.turn.id }, env.deps.readTurn)).toBe(false);
    expect(await cardFromOutsideData(env.deps.db, { accountId, turnId: message.turn.id, fromOutside: true }, env.deps.readTurn)).toBe(true);
    expect(await cardFromOutsideData(env.deps.db, { accountId, turnId: null }, env.deps.readTurn)).toBe(false);
  });
});
