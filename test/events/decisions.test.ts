import { describe, expect } from 'vitest';
import { EventHandlers } from '../../src/events/event-map.js';
import { deliverEvent, recordEvent, sweepEvents } from '../../src/events/outbox.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { eventHandlers } from '../../workers/event-handlers.js';
import { CHALLENGER, proposeSubjectTest, subjectTestAudience, winnerCard } from '../helpers/experiments.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';
import { eventsOfCard, row, rows } from '../helpers/rows.js';

/**
 * `card.decided` (docs/architecture.md, "Events"): a decision no person made runs the same follow-ups as a person's,
 * and an event whose delivery was never queued is found by the sweep and delivered once, by the card-timers pool.
 */
it.override('options', { env: { EVENTS_SWEEP_AFTER_MS: '0' }, pools: ['card-timers'] });

/** A proposed experiment and a winner card for it, due to auto-resolve at `at` (as the ladder or a setting files one). */
async function dueWinner(env: TestEnv, accountId: string, at: number) {
  await subjectTestAudience(env.deps.db, accountId);
  const { id: experimentId } = await proposeSubjectTest(env.deps.db, accountId);
  const card = await winnerCard(env.deps.db, accountId, experimentId, { autoResolveAt: at });
  return { experimentId, cardId: card.id };
}

describe('card.decided', () => {
  it('is recorded by the auto-resolve timer too, whose decision runs the same follow-ups: the winner is adopted', async ({ env }) => {
    const { accountId } = await env.tenant();
    const at = Date.now() - 1_000;
    const { experimentId, cardId } = await dueWinner(env, accountId, at);
    expect(await autoResolve(env.deps, accountId, cardId, at)).toBe('resolved');
    const [event] = await eventsOfCard(env, cardId);
    expect(event.payload).toMatchObject({ decision: 'approve', decidedBy: 'trust_ladder', actor: null, sourceType: 'experiment_winner' });
    const repo = experimentsRepository(env.deps.db);
    await waitFor(async () => (await repo.get(accountId, experimentId))!.adoptedAt !== null, 'the winner adopted by the pool');
    expect(await repo.defaultFor(accountId, 'mail_subject', 'onboarding')).toBe(CHALLENGER);
  });

  it('never queued, is found by the sweep and delivered once; a second delivery runs nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    const ref = await recordEvent(env.deps.db, 'card.decided', {
      accountId,
      cardId: 'card_none',
      kind: 'approval',
      sourceType: 'agent_approval',
      decision: 'approve',
      decidedBy: 'person',
      actor: null,
      payload: {},
      at: Date.now(),
    });
    const out = await sweepEvents(env.deps);
    expect(out.eventsQueued).toBeGreaterThanOrEqual(1);
    const event = () => row(env, 'events_outbox', { account_id: accountId, id: ref.eventId });
    await waitFor(async () => (await event()).done_at !== null, 'the swept event delivered');
    expect([...(await event()).handled].sort()).toEqual(['experiments', 'workflows']);
    expect(await deliverEvent(env.deps, eventHandlers(), ref)).toEqual({ skipped: 'already delivered' });
    await waitFor(async () => !(await rows(env, 'events_outbox').whereNull('done_at').first()), 'every event delivered');
    expect((await sweepEvents(env.deps)).eventsQueued).toBe(0);
    // Kept EVENTS_KEEP_DAYS after its delivery, then removed by the sweep.
    const later = Date.now() + env.config.events.keepMs + 1_000;
    expect((await sweepEvents(env.deps, later)).eventsPruned).toBeGreaterThanOrEqual(1);
    expect(await event()).toBeUndefined();
  });

  it('takes one handler per area and event', () => {
    const handlers = new EventHandlers().on('card.decided', 'a', async () => undefined);
    expect(() => handlers.on('card.decided', 'a', async () => undefined)).toThrow(/a already handles card.decided/);
  });
});
