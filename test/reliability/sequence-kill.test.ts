import { describe, expect } from 'vitest';
import { sequenceIdFor } from '../../src/mail/sequences.repository.js';
import { shipCard } from '../../src/shipping/ship-card.service.js';
import { buildCard } from '../helpers/factories.js';
import { it as base } from '../helpers/fixture.js';
import { killFence } from '../helpers/kill-fence.js';
import { until } from '../helpers/processes.js';
import { QUICK_STALLS, waitQueuesIdle } from '../helpers/queues-idle.js';
import { backdate } from '../helpers/row-setup.js';
import { countRows, rows } from '../helpers/rows.js';
import { startHttpProvider } from '../helpers/smtp-http-provider.js';

/**
 * kill -9 of the worker that ships sequence steps, again and again, while 24 sequences of three mails
 * each run through the HTTP mail API (which can be asked whether a key was delivered). Every step of
 * every sequence must reach the provider exactly once: none twice (one live fence per card and step),
 * none skipped (the mail sweep reconciles a fence a kill left behind and queues a step left without a job).
 * Counted once the queue is idle: the killed workers' jobs ran again and the sweep ran twice more.
 */
const SEQUENCES = 24;
type HttpProvider = Awaited<ReturnType<typeof startHttpProvider>>;

/** The mail settings of this test's world and of every worker process it starts. */
const mailEnv = (provider: HttpProvider) => ({
  MAIL_TRANSPORT: 'http',
  MAIL_API_URL: provider.url,
  MAIL_SEND_TIMEOUT_MS: '1000',
  MAIL_RECONCILE_DELAY_MS: '100',
  MAIL_RECONCILE_WINDOW_MS: '3000',
  MAIL_SWEEP_MS: '250',
  ...QUICK_STALLS,
});

/** The shared fixture with the HTTP mail API stand-in of the file's own (`provider`). */
const it = base.extend('provider', { scope: 'file' }, async ({}, { onCleanup }) => {
  const provider = await startHttpProvider();
  onCleanup(() => provider.close());
  return provider;
});
it.override('options', ({ provider }) => ({ env: mailEnv(provider) }));

const stepOf = (text: string) => Number(/step (\d)/.exec(text)?.[1]);

describe('kill -9 of the sequence worker', () => {
  it('ships every step of every sequence exactly once: none twice, none skipped', async ({ env, provider }) => {
    const { accountId } = await env.tenant();
    const cards = [];
    for (let i = 0; i < SEQUENCES; i++) {
      const card = await buildCard(env.deps.db, accountId, 'approval', {
        sourceType: 'sequence',
        title: `Sequence ${i}`,
        payload: {
          work: 'sequence',
          to: `lead-${i}@kill.test`,
          draft: { subject: `Idea ${i}`, body: `step 0 of ${i}` },
          steps: [
            { body: `step 1 of ${i}`, delayDays: 1 },
            { body: `step 2 of ${i}`, delayDays: 1 },
          ],
        },
      });
      await shipCard(env.deps, null, card, { decidedBy: 'person' });
      cards.push(card);
    }
    // A day passes, and every later step is due at once: the sweep queues them, and their own jobs run.
    await backdate(
      env,
      'mail_sequences',
      { account_id: accountId },
      { next_at: Date.now() - 60_000, steps: env.deps.db.raw(`jsonb_set(steps, '{2,delayMs}', '0')`) },
    );
    // The step jobs queued a day out are due now too: they run beside the sweep's, as they would after that day.
    for (const job of await env.deps.queues.get('shipments')!.getJobs(['delayed'])) await job.promote();
    provider.state.delayMs = 40;

    const fence = killFence(env, 'shipments', mailEnv(provider));
    try {
      const worker = await fence.start();
      const kills = await fence.killAt(
        worker,
        [8, 18, 30].map((after) => SEQUENCES + after),
        () => provider.messages.length,
        20,
      );
      await until(
        async () => (await countRows(env, 'mail_sequences', { account_id: accountId, status: 'finished' })) === SEQUENCES,
        120_000,
        100,
      );
      // A killed worker's step job runs again once BullMQ finds it stalled: counted only after that, and two sweeps more.
      await waitQueuesIdle(env, ['shipments']);
      expect(kills).toBe(3);
    } finally {
      await fence.stopAll();
    }
    // Kills landed mid-send: fences left `sending` were settled by reconciliation, not by their sender.
    const reconciled = await rows(env, 'shipments', { account_id: accountId }).whereNotNull('reconcile_until');
    expect(reconciled.length).toBeGreaterThan(0);

    for (let i = 0; i < SEQUENCES; i++) {
      const mine = provider.messages.filter((m) => m.body.to === `lead-${i}@kill.test`);
      expect(mine.map((m) => stepOf(m.body.text)).sort(), `lead-${i}`).toEqual([0, 1, 2]);
    }
    const fences = await rows(env, 'shipments', { account_id: accountId, status: 'sent' }).select('card_id', 'step');
    expect(fences).toHaveLength(SEQUENCES * 3);
    const seqs = await rows(env, 'mail_sequences', { account_id: accountId }).select('id', 'card_id');
    expect(seqs.map((s) => s.id).sort()).toEqual(cards.map((c) => sequenceIdFor(c.id)).sort());
  }, 240_000);
});
