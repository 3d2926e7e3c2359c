import { readdir } from 'node:fs/promises';
import { describe, expect } from 'vitest';
import { until as poll } from '../helpers/processes.js';
import { ReviewItemResponse } from '../../api/routes/review.schemas.js';
import { recordTurn } from '../../src/agent/messages/agent.service.js';
import { cardAutoResolve } from '../../src/jobs/card-timers.js';
import { enqueue, pendingJob } from '../../src/jobs/registry.js';
import { newId } from '../../src/ids.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { createCard } from '../helpers/cards.js';
import { shipBySetting, setApproval } from '../../src/review/approval.service.js';
import { returnRevision } from '../../src/agent/messages/card-revision.js';
import { sweepCards } from '../../src/shipping/after-approval.js';
import { raiseTrust, trustLevel } from '../../src/review/trust.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

const MAIL_DIR = `/tmp/gas-timers-${process.pid}-${Date.now()}`;
it.override('options', {
  env: {
    TRUST_AUTO_RESOLVE_AFTER: '3',
    TRUST_AUTO_RESOLVE_DELAY_MS: '300',
    REVIEW_REVISION_DELAY_MS: '200',
    CARD_SWEEP_MS: '600000',
    RATE_WRITES_PER_MINUTE: '100000',
    RATE_WRITES_BURST: '100000',
    RATE_ACCOUNT_PER_MINUTE: '100000',
    RATE_ACCOUNT_BURST: '100000',
    MAIL_TRANSPORT: 'local',
    MAIL_LOCAL_DIR: MAIL_DIR,
  },
  pools: ['card-timers', 'shipments', 'agent-turns'],
});

const item = async (env: TestEnv, token: string, id: string) =>
  ReviewItemResponse.parse((await env.api().get(`/api/v1/review/${id}`).set(auth(token))).body).item;
const row = (env: TestEnv, accountId: string, id: string) => cardsRepository(env.deps.db).find(accountId, id);

/** Timers in these tests fire within seconds; allow 15. */
const until = <T>(fn: () => Promise<T | null | undefined | false>, ms = 15_000) => poll(fn, ms);

// Email is the kind of work that can ship on every account (the only one with an adapter today).
const newMailCard = (env: TestEnv, accountId: string, extra: Record<string, unknown> = {}) =>
  createCard(env.deps, {
    id: newId('card'),
    accountId,
    kind: 'approval',
    sourceType: 'mail_draft',
    title: 'Note to Lee',
    payload: { work: 'email', to: 'lee@initech.test', draft: { subject: 'Note to Lee', body: 'Hi Lee' } },
    actions: [],
    primaryLabel: '',
    ...extra,
  });

describe('trust ladder', () => {
  it('past the threshold, a new card says why and when it will auto-resolve, and the timer resolves it', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) {
      const c = await buildCard(env.deps.db, accountId, 'mail_draft');
      expect((await env.api().post(`/api/v1/review/${c.id}/send`).set(auth(token)).send({})).status).toBe(200);
    }
    const before = Date.now();
    const card = await newMailCard(env, accountId);
    const shown = await item(env, token, card.id);
    expect(shown.autoResolveAt).toBeGreaterThanOrEqual(before + 300);
    expect(shown.detail).toMatchObject({
      autoResolve: { at: shown.autoResolveAt, approvedUnchanged: 3, threshold: 3, kindOfWork: 'email' },
    });
    expect((shown.detail!.autoResolve as { reason: string }).reason).toMatch(
      /^The last 3 email drafts were approved unchanged, so this one sends at \d{4}-\d\d-\d\d \d\d:\d\d UTC unless someone acts first\.$/,
    );
    const done = await until(async () => {
      const c = await row(env, accountId, card.id);
      return c?.status === 'sent' && c;
    });
    expect(done.resolution).toMatchObject({ action: 'send', by: 'trust_ladder' });
  });

  it('sends a trusted mail draft at its deadline, recorded as decided by the trust ladder', async ({ env }) => {
    const { accountId } = await env.tenant();
    await raiseTrust(env.deps.db, accountId, 'email');
    await raiseTrust(env.deps.db, accountId, 'email');
    await raiseTrust(env.deps.db, accountId, 'email');
    const card = await createCard(env.deps, {
      id: newId('card'),
      accountId,
      kind: 'approval',
      sourceType: 'mail_draft',
      title: 'Intro',
      payload: { work: 'email', to: 'kim@initech.test', draft: { subject: 'ladder-mail', body: 'hi' } },
      actions: [],
      primaryLabel: '',
    });
    expect(card.autoResolveAt).not.toBeNull();
    expect((card.detail as { autoResolve: { reason: string } }).autoResolve.reason).toContain(
      'email drafts were approved unchanged, so this one sends at',
    );
    const sent = await until(async () => {
      const c = await row(env, accountId, card.id);
      return c?.status === 'sent' && c;
    });
    expect(sent.resolution).toMatchObject({ action: 'send', by: 'trust_ladder' });
    const events = await rows(env, 'channel_events', { account_id: accountId, channel: 'email', type: 'sent' });
    expect(events.map((e: { decided_by: string }) => e.decided_by)).toEqual(['trust_ladder']);
    const files = await readdir(MAIL_DIR);
    expect(files.filter((f) => f.endsWith('.eml'))).toContain(`mail-${(sent.resolution as { sendId: string }).sendId}.eml`);
  });

  it('never auto-resolves spending, cards from outside data, or work set to run without approval', async ({ env }) => {
    const { accountId } = await env.tenant();
    for (const k of ['spend', 'email'] as const) for (let i = 0; i < 5; i++) await raiseTrust(env.deps.db, accountId, k);
    const budget = await createCard(env.deps, {
      id: newId('card'),
      accountId,
      kind: 'approval',
      sourceType: 'budget_change',
      title: 'More budget',
      budgetChange: { amount: 100 },
      payload: { work: 'spend' },
      actions: [],
      primaryLabel: '',
    });
    expect(budget.autoResolveAt).toBeNull();
    const outside = await newMailCard(env, accountId, { fromOutside: true });
    expect(outside.autoResolveAt).toBeNull();
    const event = await env.deps.db.transaction((trx) =>
      recordTurn(trx, env.config, { accountId, kind: 'event', origin: 'hook', data: { label: 'signup', content: { email: 'x@y.test' } } }),
    );
    const fromHook = await newMailCard(env, accountId, { turnId: event.turn.id });
    expect(fromHook.autoResolveAt).toBeNull();
    expect(fromHook.fromOutside).toBe(true);
    const trusted = await newMailCard(env, accountId);
    expect(trusted.autoResolveAt).not.toBeNull();
  });

  it('resets trust on dismiss, so the next card waits for a person', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, accountId, 'email');
    const a = await newMailCard(env, accountId);
    expect(a.autoResolveAt).not.toBeNull();
    expect((await env.api().post(`/api/v1/review/${a.id}/dismiss`).set(auth(token)).send({ reason: 'wrong person' })).status).toBe(200);
    expect(await trustLevel(env.deps.db, accountId, 'email')).toBe(0);
    const b = await newMailCard(env, accountId);
    expect(b.autoResolveAt).toBeNull();
    // The dismissed card's timer fires into a closed card: its job finishes and nothing happens.
    const queue = env.deps.queues.get('card-timers')!;
    const jobId = cardAutoResolve.key({ accountId, cardId: a.id, at: a.autoResolveAt! });
    // Its enqueue key is free again once the job finished (BullMQ drops it at completion).
    await until(async () => !(await pendingJob(queue, jobId)));
    expect((await row(env, accountId, a.id))?.status).toBe('dismissed');
  });

  it('does not put autoResolveAt on work the account lets run without approval', async ({ env }) => {
    const { accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, accountId, 'email');
    await setApproval(env.deps.db, accountId, 'email', false);
    expect((await newMailCard(env, accountId)).autoResolveAt).toBeNull();
  });
});

describe('work set to run without approval', () => {
  it('ships a mail draft through the fenced send path, recorded as decided by the setting', async ({ env }) => {
    const { accountId } = await env.tenant();
    await setApproval(env.deps.db, accountId, 'email', false);
    const card = await shipBySetting(
      env.deps.db,
      {
        id: newId('card'),
        accountId,
        kind: 'approval',
        sourceType: 'mail_draft',
        title: 'Follow-up',
        payload: { work: 'email', to: 'ana@umbrella.test', draft: { subject: 'setting-mail', body: 'hi' } },
        actions: [],
        primaryLabel: '',
      },
      env.deps.readTurn,
    );
    expect((card.detail as { autoResolve: { by: string } }).autoResolve.by).toBe('setting');
    await sweepCards(env.deps);
    const sent = await until(async () => {
      const c = await row(env, accountId, card.id);
      return c?.status === 'sent' && c;
    });
    expect(sent.resolution).toMatchObject({ action: 'send', by: 'setting' });
    const events = await rows(env, 'channel_events', { account_id: accountId, channel: 'email', type: 'sent' });
    expect(events.map((e: { decided_by: string }) => e.decided_by)).toEqual(['setting']);
  });

  it('still waits for a person when a webhook payload prompted the work', async ({ env }) => {
    const { accountId } = await env.tenant();
    await setApproval(env.deps.db, accountId, 'email', false);
    const event = await env.deps.db.transaction((trx) =>
      recordTurn(trx, env.config, { accountId, kind: 'event', origin: 'hook', data: { label: 'form', content: {} } }),
    );
    const card = await shipBySetting(
      env.deps.db,
      {
        id: newId('card'),
        accountId,
        kind: 'approval',
        sourceType: 'mail_draft',
        title: 'From a form',
        turnId: event.turn.id,
        payload: { work: 'email', to: 'ana@umbrella.test', draft: { subject: 's', body: 'b' } },
        actions: [],
        primaryLabel: '',
      },
      env.deps.readTurn,
    );
    expect(card).toMatchObject({ status: 'pending', autoResolveAt: null, fromOutside: true });
    await sweepCards(env.deps);
    expect((await row(env, accountId, card.id))?.status).toBe('pending');
  });
});

describe('snooze wake-up', () => {
  it('the card-timers job returns a snoozed card to pending at `until`', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'question');
    const until = Date.now() + 300;
    expect((await env.api().post(`/api/v1/review/${card.id}/snooze`).set(auth(token)).send({ until })).status).toBe(200);
    expect((await row(env, accountId, card.id))?.status).toBe('snoozed');
    const woke = await until_(async () => {
      const c = await row(env, accountId, card.id);
      return c?.status === 'pending' && c;
    });
    expect(Date.now()).toBeGreaterThanOrEqual(until);
    expect(woke.snoozedUntil).toBeNull();
  });
});
const until_ = until;

describe('request-changes', () => {
  it('starts a revision turn after the delay and returns the revised card to pending with its history', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft');
    expect(
      (await env.api().post(`/api/v1/review/${card.id}/request-changes`).set(auth(token)).send({ text: 'Mention the Reno site' })).status,
    ).toBe(200);
    const back = await until(async () => {
      const c = await row(env, accountId, card.id);
      return c?.status === 'pending' && c;
    }, 25_000);
    expect(back.version).toBe(2);
    expect(back.history).toHaveLength(1);
    expect(back.history[0]).toMatchObject({ version: 1, requestedChanges: 'Mention the Reno site' });
    const turns = await rows(env, 'agent_turns', { account_id: accountId, kind: 'revision' });
    expect(turns).toHaveLength(1);
    expect(turns[0].origin).toBe('review');
    const shown = await item(env, token, card.id);
    expect(shown.actions).toEqual(['send', 'request_changes', 'snooze', 'dismiss']);
    expect(shown.detail).toMatchObject({ revision: { version: 2, requestedChanges: 'Mention the Reno site' } });
  });
});

describe('revision return', () => {
  it('folds the card the revision turn produced into the card under review, keeping the old version in history', async ({ env }) => {
    const { token, accountId } = await env.tenant();
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', { status: 'needs_revision' });
    const rec = await env.deps.db.transaction((trx) =>
      recordTurn(trx, env.config, { accountId, kind: 'revision', origin: 'review', text: 'revise' }),
    );
    await env.deps.db('agent_turns').where({ id: rec.turn.id }).update({ status: 'replied', finished_at: Date.now() });
    await env.deps.db('review_cards').where({ id: card.id }).update({ revision_turn_id: rec.turn.id, requested_changes: 'Shorter please' });
    const produced = await buildCard(env.deps.db, accountId, 'mail_draft', {
      turnId: rec.turn.id,
      title: 'Intro to Acme (shorter)',
      payload: { work: 'email', to: 'jane@acme.test', draft: { subject: 'Quick idea', body: 'Hi Jane, one line.' } },
    });
    expect(await returnRevision(env.deps, accountId, card.id, rec.turn.id)).toBe(true);
    const back = await item(env, token, card.id);
    expect(back).toMatchObject({ status: 'pending', title: 'Intro to Acme (shorter)', payload: { draft: { body: 'Hi Jane, one line.' } } });
    expect(back.detail).toMatchObject({ revision: { version: 2, requestedChanges: 'Shorter please', changed: true } });
    const stored = await row(env, accountId, card.id);
    expect(stored?.history[0]).toMatchObject({
      version: 1,
      previous: { title: 'Intro to Acme', payload: { draft: { body: 'Hi Jane,\n\nA short note.' } } },
      revisedFrom: produced.id,
    });
    expect(await item(env, token, produced.id)).toMatchObject({ status: 'resolved', resolution: { action: 'merged', into: card.id } });
    expect(await returnRevision(env.deps, accountId, card.id, rec.turn.id)).toBe(false);
  });
});

describe('person versus auto-resolve', () => {
  /** Backends of this file's database waiting for a row (the held card): how far each side of a race has got. */
  const lockWaiters = async (env: TestEnv) =>
    Number(
      (
        await env.deps.db.raw(
          `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' ` +
            `and wait_event in ('transactionid', 'tuple')`,
        )
      ).rows[0].n,
    );

  // Each race is forced, not left to timing: a test transaction holds the card's row, both sides are
  // let in one after the other until each waits on that row, then the row is released. Postgres serves
  // waiters of a row in arrival order, so the first side let in wins and the second's conditional
  // update finds the card already taken. Both orders, for a plain approval (it ships nothing) and mail cards.
  const races = [
    { mail: false, first: 'ladder' },
    { mail: false, first: 'person' },
    { mail: true, first: 'ladder' },
    { mail: true, first: 'person' },
  ] as const;
  it.for([...races, ...races])(
    'resolves the card exactly once when the $first side reaches it first (mail: $mail); the other loses',
    { timeout: 60_000 },
    async ({ mail, first }, { env }) => {
      const { token, accountId } = await env.tenant();
      const queue = env.deps.queues.get('card-timers')!;
      const at = Date.now();
      const card = await buildCard(env.deps.db, accountId, mail ? 'mail_draft' : 'plain', { autoResolveAt: at });
      const jobId = cardAutoResolve.key({ accountId, cardId: card.id, at });
      const person = () =>
        (mail ? env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({}) : approveCard(env, token, card.id)).then(
          (r) => r,
        );
      const ladder = () => enqueue(env.deps.queues, cardAutoResolve, { accountId, cardId: card.id, at });

      const hold = await env.deps.db.transaction();
      let answered: ReturnType<typeof person>;
      try {
        await hold('review_cards').where({ id: card.id }).forUpdate().first();
        if (first === 'ladder') {
          await ladder();
          await poll(async () => (await lockWaiters(env)) === 1, 15_000);
          answered = person();
        } else {
          answered = person();
          await poll(async () => (await lockWaiters(env)) === 1, 15_000);
          await ladder();
        }
        await poll(async () => (await lockWaiters(env)) === 2, 15_000);
      } finally {
        await hold.commit();
      }
      const res = await answered!;
      // The event that proves the timer ran to its end: its job finished (whether or not BullMQ keeps it).
      await poll(async () => !(await pendingJob(queue, jobId)), 15_000);

      const final = await row(env, accountId, card.id);
      expect(final?.status).toBe(mail ? 'sent' : 'resolved');
      expect((final?.resolution as { by?: string } | null)?.by).toBe(first === 'person' ? 'person' : 'trust_ladder');
      expect(res.status).toBe(first === 'person' ? 200 : 409);
      if (mail) {
        expect(await rows(env, 'shipments', { card_id: card.id })).toHaveLength(1);
        const files = await readdir(MAIL_DIR);
        const sendId = (final!.resolution as { sendId: string }).sendId;
        expect(files.filter((f) => f === `mail-${sendId}.eml`)).toHaveLength(1);
      }
    },
  );
});
