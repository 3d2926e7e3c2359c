import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { setApproval, shipBySetting } from '../../src/review/approval.service.js';
import { DELIVERY_QUESTION_SOURCE } from '../../src/review/cards/card-shape.js';
import { createCard } from '../helpers/cards.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { gate } from '../helpers/db-holds.js';
import { envFor, type TestEnv } from '../helpers/env.js';
import { ROOT, until, waitFor } from '../helpers/processes.js';
import { QUICK_STALLS, redisNow, stalledSince, waitQueuesIdle } from '../helpers/queues-idle.js';
import { smtpEnv, type ReceivedMail, type TestSmtp } from '../helpers/smtp-server.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

/**
 * kill -9 of the worker process that sends mail in the background, over and over, while approved mail
 * cards ship through the real SMTP transport to a loopback SMTP server.
 *
 * Where sends happen: a person's `POST /review/{id}/send` calls the provider in the API process; the
 * background sends are the trust ladder's and the account setting's, which the `card-timers` pool
 * ships through the same fenced `sendCard`; the `shipments` pool reconciles fences whose answer was
 * lost (the mail sweep and `mail.reconcile`). The process killed here runs both pools, as a
 * `--pools card-timers,shipments` worker does in production.
 *
 * Half the cards are approved by the account's setting (email runs without approval: the card is due
 * at once and the card sweep ships it), half by the trust ladder (a delayed `card.auto-resolve` job
 * each). A fence a kill left unsettled goes `sending` → `pending` (mail sweep) → `unknown` (SMTP cannot
 * be asked) → an urgent delivery question. The test plays the person who answers it, through the API,
 * by looking at what the SMTP server received for that recipient, and sends a card that came back to
 * pending. The first kill is arranged to land after the server answered 250 and before the fence
 * settled (settles wait at a gate in Postgres until the worker is dead); the others land wherever they
 * fall. Once every card reads `sent`, the queues are left to go idle (a killed worker's jobs re-run
 * by BullMQ's stalled-job check, every sweep twice more) before anything is counted: every card was
 * delivered exactly once.
 */
export interface MailKillOptions {
  sends: number;
  kills: number;
  /** Each kill comes after a random number of further deliveries in [1, maxSendsBetweenKills]. */
  maxSendsBetweenKills: number;
  settleTimeoutMs: number;
}

export interface MailKillWorld {
  env: TestEnv;
  smtp: TestSmtp;
}

/**
 * The shared fixture's options for this world: the file's SMTP stand-in answers with jitter, sends
 * time out fast and the person in the test is never rate limited.
 */
export function mailKillOptions(smtp: TestSmtp) {
  smtp.mode = { kind: 'jitter', minMs: 2, maxMs: 30 };
  return {
    env: {
      ...smtpEnv(smtp),
      // A live send answers within the send timeout; a fence `sending` for twice that is a dead sender's.
      MAIL_SEND_TIMEOUT_MS: '2000',
      MAIL_RECONCILE_DELAY_MS: '100',
      MAIL_RECONCILE_WINDOW_MS: '500',
      MAIL_SWEEP_MS: '500',
      CARD_SWEEP_MS: '300',
      ...QUICK_STALLS,
      TRUST_AUTO_RESOLVE_AFTER: '1',
      TRUST_AUTO_RESOLVE_DELAY_MS: '1',
      // The test is one busy person answering delivery questions and re-sending.
      RATE_WRITES_PER_MINUTE: '100000',
      RATE_WRITES_BURST: '100000',
      RATE_READS_PER_MINUTE: '100000',
      RATE_READS_BURST: '100000',
      RATE_ACCOUNT_PER_MINUTE: '100000',
      RATE_ACCOUNT_BURST: '100000',
    },
  };
}

interface Worker {
  child: ChildProcess;
  exited: Promise<void>;
}

export interface MailKillOutcome {
  /** Kills that came while deliveries were still outstanding. */
  killsMidWork: number;
  /** Delivery questions the person answered. */
  questions: number;
  /** Cards whose first fence did not settle on its own (reconciled, asked about, or voided and resent). */
  fencedThenReconciled: number;
  /** Fences the arranged kill left unsettled although the server had answered 250 (each then settled through a person). */
  killedAfter250: number;
}

export async function runMailKill(world: MailKillWorld, opts: MailKillOptions): Promise<MailKillOutcome> {
  const { env, smtp } = world;
  const db = env.deps.db;
  const children: Worker[] = [];
  // Message-IDs the server has answered 250 for.
  const answered = new Set<string>();
  const onAccepted = (m: ReceivedMail) => m.messageId && answered.add(m.messageId);

  /** A real worker process (node with tsx as a loader, so kill -9 hits the process holding the jobs). */
  const startWorker = async (): Promise<Worker> => {
    const queue = env.deps.queues.get('card-timers')!;
    const before = (await queue.getWorkers()).length;
    const { BASE_URL: _vite, ...inherited } = process.env;
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', 'workers', '--pools', 'card-timers,shipments'], {
      cwd: ROOT,
      env: { ...inherited, ...envFor(env.config), ...configEnv(env) },
      stdio: 'ignore',
    });
    const w = { child, exited: new Promise<void>((resolve) => child.on('exit', () => resolve())) };
    children.push(w);
    await waitFor(async () => (await queue.getWorkers()).length > before, 'mail worker start', 60_000);
    return w;
  };

  try {
    const bySetting = await env.tenant(['review:read', 'review:write'], 'Setting Co');
    const byLadder = await env.tenant(['review:read', 'review:write'], 'Ladder Co');
    await setApproval(db, bySetting.accountId, 'email', false);
    await raiseTrust(db, byLadder.accountId, 'email');
    const tokenOf = new Map([
      [bySetting.accountId, bySetting.token],
      [byLadder.accountId, byLadder.token],
    ]);

    // The approved sends, through the paths the agent's tools take. Each card has its own recipient.
    const cards: { id: string; accountId: string; to: string }[] = [];
    for (let i = 0; i < opts.sends; i++) {
      const tenant = i % 2 === 0 ? bySetting : byLadder;
      const to = `lead-${i}@kill.test`;
      const card = {
        id: newId('card'),
        accountId: tenant.accountId,
        kind: 'approval',
        sourceType: 'mail_draft',
        title: `Intro ${i}`,
        payload: { work: 'email', to, draft: { subject: `Quick idea #${i}`, body: `Hello ${i}` } },
        actions: [],
        primaryLabel: '',
      };
      if (tenant === bySetting) await shipBySetting(db, card, env.deps.readTurn);
      else await createCard(env.deps, card);
      cards.push({ id: card.id, accountId: tenant.accountId, to });
    }
    const recipients = new Set(cards.map((c) => c.to));
    const delivered = () => smtp.received.filter((m) => m.to.some((t) => recipients.has(t))).length;
    smtp.events.on('accepted', onAccepted);
    const cardIds = cards.map((c) => c.id);
    const unsettled = () => rows(env, 'shipments').whereIn('card_id', cardIds).whereIn('status', ['sending', 'pending', 'unknown']);

    // kill -9 after a random number of further deliveries, then a fresh process; the last one stays.
    let killsMidWork = 0;
    let killedAfter250: string[] = [];
    let firstKillAt = 0;
    for (let k = 0; k < opts.kills; k++) {
      const w = await startWorker();
      const target = Math.min(opts.sends - 1, delivered() + 1 + Math.floor(Math.random() * opts.maxSendsBetweenKills));
      await waitFor(async () => delivered() >= target, `delivery ${target}`, 60_000);
      // The first kill comes while a send the server answered 250 waits to settle its fence: settles
      // wait at a gate until the worker is dead (its transaction dies with it).
      const settles = k === 0 ? await gate(env, 'shipments', "OLD.status <> 'sent' AND NEW.status = 'sent'", 'UPDATE') : null;
      await settles?.reached();
      if (settles) firstKillAt = await redisNow(env);
      const sentBefore = await rows(env, 'review_cards')
        .whereIn('id', cardIds)
        .where({ status: 'sent' })
        .count<{ count: string }[]>('* as count');
      w.child.kill('SIGKILL');
      await w.exited;
      if (settles) {
        killedAfter250 = (await unsettled()).filter((f) => answered.has(`<${f.idempotency_key}@localhost>`)).map((f) => f.card_id);
        await settles.open();
      }
      if (Number(sentBefore[0]!.count) < opts.sends) killsMidWork++;
    }
    // The gate held a settle whose 250 had come, so the kill left at least that fence unsettled.
    expect(killedAfter250.length).toBeGreaterThan(0);
    await startWorker();

    // The person: answers each delivery question from what the SMTP server shows for that recipient,
    // and sends any mail card that came back to pending without a timer of its own. A wrong answer
    // from the service fails the test at once (this runs outside any "not yet" polling).
    const api = (accountId: string) => auth(tokenOf.get(accountId)!);
    let questions = 0;
    const person = async () => {
      const open = await rows(env, 'review_cards')
        .whereIn('account_id', [...tokenOf.keys()])
        .where({ status: 'pending', source_type: DELIVERY_QUESTION_SOURCE });
      for (const q of open) {
        const to = (q.payload as { to: string }).to;
        const arrived = smtp.received.some((m) => m.to.includes(to));
        const res = await env
          .api()
          .post(`/api/v1/review/${q.id}/answer`)
          .set(api(q.account_id))
          .send({ action: 'choose', optionValues: [arrived ? 'mark_sent' : 'mark_not_sent'] });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        questions++;
      }
      const back = await rows(env, 'review_cards').whereIn('id', cardIds).where({ status: 'pending' }).whereNull('auto_resolve_at');
      for (const c of back) {
        const res = await env.api().post(`/api/v1/review/${c.id}/send`).set(api(c.account_id)).send({});
        expect([200, 503], JSON.stringify(res.body)).toContain(res.status);
      }
    };
    const allSent = async () => {
      const settled = await rows(env, 'review_cards')
        .whereIn('id', cardIds)
        .where({ status: 'sent' })
        .count<{ count: string }[]>('* as count');
      return Number(settled[0]!.count) === cards.length;
    };
    await until(
      async () => {
        await person();
        return allSent();
      },
      opts.settleTimeoutMs,
      100,
    );
    // Every card reads `sent`; what is still queued or running (a killed worker's stalled jobs) runs
    // now, and the sweeps twice more, before anything is counted.
    await waitQueuesIdle(env, ['card-timers', 'shipments'], { timeoutMs: opts.settleTimeoutMs });
    expect(await allSent()).toBe(true);
    // The job the first kill cut short (it held the gated settle) was found stalled and ran again before this count.
    expect((await stalledSince(env, ['card-timers', 'shipments'], firstKillAt)).length).toBeGreaterThan(0);

    // 0 duplicates, 0 lost: each card's recipient got exactly one message, one Message-ID each.
    const perRecipient = smtp.countBy((m) => m.to.find((t) => recipients.has(t)) ?? null);
    expect([...perRecipient.values()].filter((n) => n !== 1)).toEqual([]);
    expect(perRecipient.size).toBe(cards.length);
    const ids = smtp.countBy((m) => (m.to.some((t) => recipients.has(t)) ? m.messageId : null));
    expect(ids.size).toBe(cards.length);

    // One settled fence per card, and it is the message the server holds; every other fence was void.
    const fences = await rows(env, 'shipments').whereIn(
      'card_id',
      cards.map((c) => c.id),
    );
    const sent = fences.filter((f) => f.status === 'sent');
    expect(sent).toHaveLength(cards.length);
    expect(new Set(sent.map((f) => f.card_id)).size).toBe(cards.length);
    expect(fences.filter((f) => f.status !== 'sent' && f.status !== 'not_sent')).toEqual([]);
    const heldIds = new Set(smtp.received.map((m) => m.messageId));
    for (const f of sent) expect(heldIds.has(`<${f.idempotency_key}@localhost>`)).toBe(true);
    for (const f of fences.filter((x) => x.status === 'not_sent')) expect(heldIds.has(`<${f.idempotency_key}@localhost>`)).toBe(false);

    // Each card resolved once: one `sent` channel event per card, none for void fences.
    const events = await rows(env, 'channel_events')
      .whereIn(
        'ref_id',
        fences.map((f) => f.id),
      )
      .where({ type: 'sent' });
    expect(events.map((e) => e.ref_id).sort()).toEqual(sent.map((f) => f.id).sort());

    // No delivery question is left open.
    const openQuestions = await rows(env, 'review_cards')
      .whereIn('account_id', [...tokenOf.keys()])
      .where({ source_type: DELIVERY_QUESTION_SOURCE })
      .whereNot('status', 'resolved');
    expect(openQuestions).toEqual([]);

    const fencedThenReconciled = new Set(
      fences.filter((f) => f.question_card_id !== null || f.attempts > 0 || f.status === 'not_sent').map((f) => f.card_id),
    );
    // What the arranged kill left between the 250 and the settle was settled as sent, through a person's answer.
    for (const cardId of killedAfter250) {
      expect(fencedThenReconciled.has(cardId), cardId).toBe(true);
      expect(sent.find((f) => f.card_id === cardId)?.question_card_id, cardId).not.toBeNull();
    }
    return { killsMidWork, questions, fencedThenReconciled: fencedThenReconciled.size, killedAfter250: killedAfter250.length };
  } finally {
    smtp.events.off('accepted', onAccepted);
    for (const c of children) {
      if (c.child.exitCode === null && c.child.signalCode === null) c.child.kill('SIGKILL');
      await c.exited;
    }
  }
}

/** The service settings a worker process needs to match this test's (mail, sweeps, ladder, stalled jobs). */
export function configEnv(env: TestEnv): Record<string, string> {
  const c = env.config;
  return {
    MAIL_TRANSPORT: 'smtp',
    // The SMTP transport refuses a From at localhost at start-up.
    MAIL_FROM: 'Growth Agent <agent@growthco.example>',
    SMTP_HOST: c.mail.smtp.host,
    SMTP_PORT: String(c.mail.smtp.port),
    MAIL_SEND_TIMEOUT_MS: String(c.mail.sendTimeoutMs),
    MAIL_RECONCILE_DELAY_MS: String(c.mail.reconcileDelayMs),
    MAIL_RECONCILE_WINDOW_MS: String(c.mail.reconcileWindowMs),
    MAIL_SWEEP_MS: String(c.mail.sweepEveryMs),
    CARD_SWEEP_MS: String(c.review.sweepEveryMs),
    JOBS_LOCK_MS: String(c.jobs.stalled.lockMs),
    JOBS_STALLED_INTERVAL_MS: String(c.jobs.stalled.checkEveryMs),
    TRUST_AUTO_RESOLVE_AFTER: String(c.review.trustThreshold),
    TRUST_AUTO_RESOLVE_DELAY_MS: String(c.review.autoResolveDelayMs),
  };
}
