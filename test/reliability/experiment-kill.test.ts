import { simpleParser } from 'mailparser';
import { describe, expect } from 'vitest';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { setApproval } from '../../src/review/approval.service.js';
import { DELIVERY_QUESTION_SOURCE } from '../../src/review/cards/card-shape.js';
import { gate } from '../helpers/db-holds.js';
import { CHALLENGER, proposeSubjectTest, SUBJECT_DRAFT, SUBJECT_TEST_AUDIENCE, subjectTestAudience } from '../helpers/experiments.js';
import { it } from '../helpers/fixture.js';
import { until, waitFor } from '../helpers/processes.js';
import { waitQueuesIdle } from '../helpers/queues-idle.js';
import { type WorkerChild, workerProcesses } from '../helpers/worker-processes.js';
import { configEnv, mailKillOptions } from './mail-kill-harness.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

/**
 * kill -9 of the worker processes an experiment runs on, while it runs: the `maintenance` pool (which drafts each
 * contact's mail with its variant, a small batch per pass) and the pools that send in the background (`card-timers`
 * ships the mail cards email-without-approval makes due at once; `shipments` reconciles fences whose answer was
 * lost), each in its own process, as in production. Both are killed mid-run three times and started again; the
 * first sender kill is arranged to land after the SMTP server answered 250 and before the fence settled (the settle
 * waits at a gate in Postgres), so one mail must be reconciled through a person's answer. At the end every contact
 * of the audience has exactly one assignment; every contact of the first wave (no exposure matures here, so the pass
 * mails that wave only) one mail card, and the SMTP server got exactly one message for it, with its own variant's
 * subject, and the contact counts as exposed.
 */
it.override('options', ({ smtp }) => {
  const base = mailKillOptions(smtp);
  return { env: { ...base.env, ...EXPERIMENT_ENV } };
});

/** The experiment settings both the file's env and its worker processes run with: small draft batches, frequent passes. */
const EXPERIMENT_ENV = {
  MAINTENANCE_SWEEP_MS: '250',
  EXPERIMENT_DRAFT_BATCH: '5',
  // No exposure matures during the test: the experiment keeps running, so its drafting and sending are what is tested.
  EXPERIMENT_REPLY_WINDOW_SECONDS: '3600',
};

/** 80 per variant planned, with room for an uneven split (experiments.service.ts withRoom). */
const AUDIENCE = SUBJECT_TEST_AUDIENCE;
const subjectOf = (key: string) => (key === 'A' ? SUBJECT_DRAFT.subject : CHALLENGER);

describe('kill -9 of the maintenance and sending workers while an experiment runs', () => {
  it('assigns every contact once, drafts at most one mail each, and delivers each of the wave only its variant, once', async ({
    env,
    smtp,
  }) => {
    const db = env.deps.db;
    const { accountId, token } = await env.tenant(['review:read', 'review:write'], 'Experiment Co');
    await setApproval(db, accountId, 'email', false);
    await subjectTestAudience(db, accountId, 'kill');
    const out = await proposeSubjectTest(db, accountId);
    expect((await approveCard(env, token, out.cardId)).status).toBe(200);
    const repo = experimentsRepository(db);
    const e = (await repo.get(accountId, out.id))!;
    expect(e.status).toBe('running');
    const audience = new Set(e.audience.map((m) => m.email));
    expect(audience.size).toBe(AUDIENCE);
    // What the pass mails while no exposure matures: the first wave, the plan's minimum in each variant (its first look).
    const assigned = await repo.assignments(accountId, out.id);
    const wave = ['A', 'B'].reduce((n, k) => n + Math.min(e.plan.minimumPerVariant, assigned.filter((a) => a.variant_key === k).length), 0);

    const workers = workerProcesses(env);
    const extra = { ...configEnv(env), ...EXPERIMENT_ENV };
    const startSender = () => workers.start(extra, ['card-timers', 'shipments']);
    const startBoth = () => Promise.all([workers.start(extra, ['maintenance']), startSender()]) as Promise<[WorkerChild, WorkerChild]>;
    const delivered = () => smtp.received.filter((m) => m.to.some((t) => audience.has(t))).length;
    const draftedCount = async () =>
      Number((await rows(env, 'experiment_assignments', { experiment_id: e.id }).whereNotNull('card_id').count({ n: '*' }))[0]!.n);
    try {
      let [maintenance, sender] = await startBoth();
      let killsMidDraft = 0;
      let killsMidSend = 0;
      for (let k = 0; k < 3; k++) {
        // Deliveries go on until a random point a little further on; then both processes die at once.
        const target = Math.min(wave - 10, delivered() + 5 + Math.floor(Math.random() * 30));
        await waitFor(async () => delivered() >= target, `delivery ${target}`, 120_000);
        // The first kill lands while a fence whose message the server answered 250 for waits to settle.
        const settles = k === 0 ? await gate(env, 'shipments', "OLD.status <> 'sent' AND NEW.status = 'sent'", 'UPDATE') : null;
        await settles?.reached();
        // The maintenance worker dies with the sender in the first two rounds (while it still drafts, as a rule).
        const both = k < 2;
        if (both && (await draftedCount()) < wave) killsMidDraft++;
        if (delivered() < wave) killsMidSend++;
        await Promise.all([both ? maintenance.kill() : null, sender.kill()]);
        await settles?.open();
        if (both) [maintenance, sender] = await startBoth();
        else sender = await startSender();
      }
      expect(killsMidSend).toBe(3);
      expect(killsMidDraft).toBeGreaterThanOrEqual(1);

      // The person: answers each delivery question from what the SMTP server shows for that recipient, and sends a
      // mail card that came back to pending without a timer of its own.
      const cardsOf = () => rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
      let questions = 0;
      const person = async () => {
        for (const q of await rows(env, 'review_cards', {
          account_id: accountId,
          status: 'pending',
          source_type: DELIVERY_QUESTION_SOURCE,
        })) {
          const arrived = smtp.received.some((m) => m.to.includes((q.payload as { to: string }).to));
          const res = await env
            .api()
            .post(`/api/v1/review/${q.id}/answer`)
            .set(auth(token))
            .send({ action: 'choose', optionValues: [arrived ? 'mark_sent' : 'mark_not_sent'] });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          questions++;
        }
        for (const c of await cardsOf().where({ status: 'pending' }).whereNull('auto_resolve_at')) {
          const res = await env.api().post(`/api/v1/review/${c.id}/send`).set(auth(token)).send({});
          expect([200, 503], JSON.stringify(res.body)).toContain(res.status);
        }
      };
      await until(
        async () => {
          await person();
          const sent = Number((await cardsOf().where({ status: 'sent' }).count({ n: '*' }))[0]!.n);
          return (await draftedCount()) === wave && sent === wave;
        },
        180_000,
        100,
      );
      // What a killed worker left queued or running runs now (stalled jobs), and the sweeps twice more.
      await waitQueuesIdle(env, ['card-timers', 'shipments', 'maintenance'], { timeoutMs: 60_000 });
      // The arranged kill left a fence between 250 and settle; a person's answer settled it.
      expect(questions).toBeGreaterThanOrEqual(1);
    } finally {
      await workers.stopAll();
    }

    // Every contact: exactly one assignment; every contact of the wave one mail card (the one the assignment names),
    // exposed once sent; nobody outside the wave any.
    const all = await repo.assignments(accountId, e.id);
    expect(all).toHaveLength(audience.size);
    expect(new Set(all.map((a) => a.contact))).toEqual(audience);
    const mailed = all.filter((a) => a.card_id !== null);
    expect(mailed).toHaveLength(wave);
    const mails = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
    const cardsPerContact = new Map<string, number>();
    for (const m of mails) cardsPerContact.set(m.payload.to, (cardsPerContact.get(m.payload.to) ?? 0) + 1);
    expect([...cardsPerContact.values()].filter((n) => n !== 1)).toEqual([]);
    expect(cardsPerContact.size).toBe(wave);
    const cardOf = new Map(mails.map((m) => [m.payload.to as string, m]));
    for (const a of mailed) {
      expect(a.card_id).toBe(cardOf.get(a.contact)!.id);
      expect(cardOf.get(a.contact)!.payload.variant).toBe(a.variant_key);
      expect(a.exposed_at, a.contact).not.toBeNull();
    }

    // What the SMTP server got: each contact exactly one message, with the subject of its own variant.
    const subjects = new Map<string, string[]>();
    for (const m of smtp.received) {
      const to = m.to.find((t) => audience.has(t));
      if (!to) continue;
      subjects.set(to, [...(subjects.get(to) ?? []), (await simpleParser(m.raw)).subject ?? '']);
    }
    expect(subjects.size).toBe(wave);
    const wrong = mailed.filter((a) => JSON.stringify(subjects.get(a.contact)) !== JSON.stringify([subjectOf(a.variant_key)]));
    expect(wrong.map((a) => ({ contact: a.contact, variant: a.variant_key, got: subjects.get(a.contact) }))).toEqual([]);
    expect(new Set(mailed.map((a) => a.variant_key))).toEqual(new Set(['A', 'B']));
  }, 420_000);
});
