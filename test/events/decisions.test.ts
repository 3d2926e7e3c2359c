import { describe, expect } from 'vitest';
import { proposeExperiment } from '../../src/agent/experiments/experiments.service.js';
import { cardShape } from '../../src/agent/tools/file-work.js';
import { EventHandlers } from '../../src/events/event-map.js';
import { deliverEvent, recordEvent, sweepEvents } from '../../src/events/outbox.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { newId } from '../../src/ids.js';
import { addCard } from '../../src/review/cards/doors.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { eventHandlers } from '../../workers/event-handlers.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { waitFor } from '../helpers/processes.js';

/**
 * `card.decided` (docs/architecture.md, "Events"): a decision no person made runs the same follow-ups as a person's,
 * and an event whose delivery was never queued is found by the sweep and delivered once, by the card-timers pool.
 */
let env: TestEnv;
it.override('options', { env: { EVENTS_SWEEP_AFTER_MS: '0' }, pools: ['card-timers'] });
it.beforeAll(({ env: e }) => {
  env = e;
});

const draft = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const CHALLENGER = 'Quick question about onboarding';

/** A proposed experiment and a winner card for it, due to auto-resolve at `at` (as the ladder or a setting files one). */
async function dueWinner(accountId: string, at: number) {
  for (let i = 0; i < 214; i++) await buildLead(env.deps.db, accountId, { contacts: [{ email: `p${i}@d${i}.test` }] });
  const out = await proposeExperiment(
    env.deps.db,
    { accountId, turnId: null, fromOutside: false },
    { thing: 'mail_subject', topic: 'onboarding', draft, challengers: [CHALLENGER], baselineRate: 0.1, minimumDetectableEffect: 0.25 },
  );
  if (typeof out === 'string') throw new Error(out);
  const card = await addCard(env.deps.db, {
    id: newId('card'),
    accountId,
    kind: 'approval',
    turnId: null,
    ...cardShape('approval', 'experiment_result'),
    sourceType: 'experiment_winner',
    title: 'Use B as the subject for "onboarding"',
    summary: 'B did better',
    prompt: 'Approve to make B the default.',
    payload: { experimentId: out.id, thing: 'mail_subject', topic: 'onboarding', winner: 'B', value: CHALLENGER },
    autoResolveAt: at,
    ladderChecked: true,
    detail: { autoResolve: { at, by: 'trust_ladder' } },
  });
  return { experimentId: out.id, cardId: card.id };
}

describe('card.decided', () => {
  it('is recorded by the auto-resolve timer too, whose decision runs the same follow-ups: the winner is adopted', async () => {
    const { accountId } = await env.tenant();
    const at = Date.now() - 1_000;
    const { experimentId, cardId } = await dueWinner(accountId, at);
    expect(await autoResolve(env.deps, accountId, cardId, at)).toBe('resolved');
    const [event] = await env.deps.db('events_outbox').whereRaw("payload->>'cardId' = ?", [cardId]);
    expect(event.payload).toMatchObject({ decision: 'approve', decidedBy: 'trust_ladder', actor: null, sourceType: 'experiment_winner' });
    const repo = experimentsRepository(env.deps.db);
    await waitFor(async () => (await repo.get(accountId, experimentId))!.adoptedAt !== null, 'the winner adopted by the pool');
    expect(await repo.defaultFor(accountId, 'mail_subject', 'onboarding')).toBe(CHALLENGER);
  });

  it('never queued, is found by the sweep and delivered once; a second delivery runs nothing', async () => {
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
    const row = () => env.deps.db('events_outbox').where({ account_id: accountId, id: ref.eventId }).first();
    await waitFor(async () => (await row()).done_at !== null, 'the swept event delivered');
    expect([...(await row()).handled].sort()).toEqual(['experiments', 'workflows']);
    expect(await deliverEvent(env.deps, eventHandlers(), ref)).toEqual({ skipped: 'already delivered' });
    await waitFor(async () => !(await env.deps.db('events_outbox').whereNull('done_at').first()), 'every event delivered');
    expect((await sweepEvents(env.deps)).eventsQueued).toBe(0);
    // Kept EVENTS_KEEP_DAYS after its delivery, then removed by the sweep.
    const later = Date.now() + env.config.events.keepMs + 1_000;
    expect((await sweepEvents(env.deps, later)).eventsPruned).toBeGreaterThanOrEqual(1);
    expect(await row()).toBeUndefined();
  });

  it('takes one handler per area and event', () => {
    const handlers = new EventHandlers().on('card.decided', 'a', async () => undefined);
    expect(() => handlers.on('card.decided', 'a', async () => undefined)).toThrow(/a already handles card.decided/);
  });
});
