import { describe, expect, it } from 'vitest';
import { agentTurn } from '../../src/jobs/agent-turns.js';
import { cardAutoResolve, cardRevise, cardRevisionReturn, cardSweep, cardWake, eventDeliver } from '../../src/jobs/card-timers.js';
import { JOBS } from '../../src/jobs/catalog.js';
import { mailReconcile, mailSweep } from '../../src/jobs/shipments.js';
import { maintenanceSweep } from '../../src/jobs/maintenance.js';
import { webhookEvent } from '../../src/jobs/webhook-events.js';
import { workflowAdvance, workflowRun } from '../../src/jobs/workflow-runs.js';

// The keys each contract builds are the ones producers built by hand before job contracts existed: jobs queued before
// the upgrade keep deduplicating against the same keys.
describe('job keys come from the job contracts', () => {
  it('builds the same keys as before, from the payload and the named key part', () => {
    expect(agentTurn.key({ accountId: 'acc_1' }, { why: 'turn', turnId: 'turn_9' })).toBe('turn-turn_9');
    expect(agentTurn.key({ accountId: 'acc_1' }, { why: 'sweep', bucket: 42 })).toBe('sweep-acc_1-42');
    expect(agentTurn.key({ accountId: 'acc_1' }, { why: 'more', at: 1_700 })).toBe('more-acc_1-1700');
    expect(cardAutoResolve.key({ accountId: 'a', cardId: 'card_1', at: 5 })).toBe('card-auto-card_1-5');
    expect(cardWake.key({ accountId: 'a', cardId: 'card_1', until: 7 })).toBe('card-wake-card_1-7');
    expect(cardRevise.key({ accountId: 'a', cardId: 'card_1', version: 3 })).toBe('card-revise-card_1-v3');
    expect(cardRevisionReturn.key({ accountId: 'a', cardId: 'card_1', turnId: 't' }, { version: 4 })).toBe(
      'card-revision-return-card_1-v4',
    );
    expect(eventDeliver.key({ accountId: 'a', eventId: 'evt_1' })).toBe('event-evt_1');
    expect(mailReconcile.key({ accountId: 'a', sendId: 'send_1' }, { attempt: 2 })).toBe('mail-reconcile-send_1-2');
    expect(webhookEvent.key({ deliveryId: 'dlv_1' })).toBe('whk-dlv_1');
    expect(workflowAdvance.key({ runId: 'run_1' }, { why: 'gate', cardId: 'card_2' })).toBe('wfadv-run_1-card_2');
    expect(workflowRun.key({ workflowId: 'wf_1' })).toBe('wf-wf_1');
    expect([cardSweep.key({}), mailSweep.key({}), maintenanceSweep.key({})]).toEqual(['card-sweep', 'mail-sweep', 'maintenance-sweep']);
  });

  it('never folds a workflow handover or repair into a job already waiting', () => {
    const handovers = new Set([1, 2, 3].map(() => workflowAdvance.key({ runId: 'run_1' }, { why: 'handover' })));
    expect(handovers.size).toBe(3);
    for (const k of handovers) expect(k).toMatch(/^wfadv-run_1-/);
    expect(workflowAdvance.key({ runId: 'run_1' }, { why: 'repair' })).toMatch(/^wfrepair-run_1-/);
  });

  it('checks the payload before it builds a key, and no key of the catalog holds a colon', () => {
    expect(() => webhookEvent.key({ deliveryId: '' })).toThrow();
    expect(() => webhookEvent.key({ deliveryId: 'a:b' })).toThrow(/must not contain ':'/);
    expect(JOBS.every((j) => typeof j.jobId === 'function')).toBe(true);
  });
});
