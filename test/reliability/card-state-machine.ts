import fc from 'fast-check';
import { rm } from 'node:fs/promises';
import { afterAll, describe, expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { createCard } from '../helpers/cards.js';
import { wakeCard } from '../../src/review/timers.service.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';

/**
 * Model-based test of the review card state machine. Random interleavings of every verb (approve,
 * answer, choose, send, snooze, request-changes, dismiss), the trust ladder's auto-resolve timer and
 * snooze wake-ups, some of them fired at the same moment as a person's verb, are driven through the
 * real HTTP API and the timer jobs' own service functions against real Postgres. The model is the
 * spec's table (section 3.1) with the decisions of docs/decisions/review-and-shipping.md ("actions / primaryLabel",
 * "Snooze", "Dismiss"), written out here independently of `src/review/cards/card-shape.ts`.
 *
 * After every step: each card's status, `actions` and deadline match the model. After every run:
 * each card closed at most once (a single terminal transition whose resolution never changes), one
 * audit entry per verb that answered 200, one `sent` channel event per mail card sent and none for
 * anything else.
 */

type CardType = 'mail_draft' | 'mail_reply' | 'network' | 'question' | 'choice' | 'budget';
type Status = 'pending' | 'snoozed' | 'needs_revision' | 'resolved' | 'sent' | 'dismissed';
type Op = 'approve' | 'answer' | 'choose' | 'send' | 'snooze' | 'request_changes' | 'dismiss' | 'auto_resolve' | 'wake' | 'stale_wake';
const OPS: Op[] = ['approve', 'answer', 'choose', 'send', 'snooze', 'request_changes', 'dismiss', 'auto_resolve', 'wake', 'stale_wake'];
const TYPES: CardType[] = ['mail_draft', 'mail_reply', 'network', 'question', 'choice', 'budget'];

const isMail = (t: CardType) => t === 'mail_draft' || t === 'mail_reply';
const TERMINAL: Status[] = ['resolved', 'sent', 'dismissed'];
/** Work whose adapter is not connected on the account (no adapter exists yet): approving it is 409, never a resolve. */
const isUnconnectedWork = (t: CardType) => t === 'network' || t === 'budget';

/** The verbs a card accepts (docs/decisions/review-and-shipping.md, "actions / primaryLabel"). */
function modelActions(t: CardType, s: Status): string[] {
  if (s === 'needs_revision') return ['dismiss'];
  if (s !== 'pending' && s !== 'snoozed') return [];
  if (isMail(t)) return ['send', 'request_changes', 'snooze', 'dismiss'];
  if (t === 'question') return ['answer', 'approve', 'snooze', 'dismiss'];
  if (t === 'choice') return ['choose', 'snooze', 'dismiss'];
  return ['approve', 'request_changes', 'snooze', 'dismiss'];
}

interface ModelCard {
  type: CardType;
  status: Status;
  autoResolveAt: number | null;
  snoozedUntil: number | null;
  /** Every `until` this card was ever snoozed to (the wake jobs that exist for it). */
  snoozes: number[];
  /** The deadline the ladder set at creation (its auto-resolve job's payload), if any. */
  ladderAt: number | null;
}

interface Outcome {
  status: number;
  /** 'person' for an HTTP verb that answered 200; 'ladder' for a timer that acted. */
  by: 'person' | 'ladder' | null;
}

/**
 * What `op` does to `c` (mutating it), and what the caller should see. `until`: the snooze's time;
 * `wakeAt`: the `until` a wake job carries (chosen before the step, as the job was queued before it).
 */
function step(c: ModelCard, op: Op, until: number, wakeAt: number | undefined): Outcome {
  const actions = modelActions(c.type, c.status);
  const close = (status: Status): void => {
    c.status = status;
    c.autoResolveAt = null;
    c.snoozedUntil = null;
  };
  switch (op) {
    case 'approve':
    case 'answer':
    case 'choose':
      if (isMail(c.type)) return { status: 409, by: null };
      if (!actions.includes(op)) return { status: 409, by: null };
      if (op === 'approve' && isUnconnectedWork(c.type)) return { status: 409, by: null };
      close('resolved');
      return { status: 200, by: 'person' };
    case 'send':
      if (!isMail(c.type) || !actions.includes('send')) return { status: 409, by: null };
      close('sent');
      return { status: 200, by: 'person' };
    case 'snooze':
      if (!actions.includes('snooze')) return { status: 409, by: null };
      c.status = 'snoozed';
      c.snoozedUntil = until;
      c.autoResolveAt = null;
      c.snoozes.push(until);
      return { status: 200, by: 'person' };
    case 'request_changes':
      if (!actions.includes('request_changes')) return { status: 409, by: null };
      c.status = 'needs_revision';
      c.autoResolveAt = null;
      c.snoozedUntil = null;
      return { status: 200, by: 'person' };
    case 'dismiss':
      if (!actions.includes('dismiss')) return { status: 409, by: null };
      close('dismissed');
      return { status: 200, by: 'person' };
    case 'auto_resolve':
      // The job carries the deadline it was scheduled for; it acts only on a pending card still holding it.
      if (c.ladderAt === null || c.status !== 'pending' || c.autoResolveAt !== c.ladderAt) return { status: 0, by: null };
      close(isMail(c.type) ? 'sent' : 'resolved');
      return { status: 0, by: 'ladder' };
    case 'wake':
    case 'stale_wake': {
      const u = wakeAt;
      if (u === undefined || c.status !== 'snoozed' || c.snoozedUntil !== u) return { status: 0, by: null };
      c.status = 'pending';
      c.snoozedUntil = null;
      return { status: 0, by: null };
    }
  }
}

const clone = (c: ModelCard): ModelCard => ({ ...c, snoozes: [...c.snoozes] });

interface Step {
  card: number;
  op: Op;
  /** A second verb or timer on the same card at the same moment. */
  race: Op | null;
}

export const stepArb = (cards: number) =>
  fc.record({ card: fc.nat(cards - 1), op: fc.constantFrom(...OPS), race: fc.option(fc.constantFrom(...OPS), { freq: 3 }) });

export const runArb = (cards: number, maxSteps: number) =>
  fc.record({
    types: fc.array(fc.constantFrom(...TYPES), { minLength: cards, maxLength: cards }),
    steps: fc.array(stepArb(cards), { minLength: 1, maxLength: maxSteps }),
  });

const BASE = {
  mail_draft: { kind: 'approval', sourceType: 'mail_draft', payload: { work: 'email', draft: { subject: 'Hello', body: 'Hi' } } },
  mail_reply: {
    kind: 'approval',
    sourceType: 'mail_reply',
    payload: { work: 'email', inReplyTo: '<x@y.test>', draft: { subject: 'Re: hi', body: 'Thanks' } },
  },
  network: {
    kind: 'approval',
    sourceType: 'network_message',
    payload: { work: 'network_message', to: 'https://www.linkedin.com/in/dana', draft: { body: 'Hi' } },
  },
  question: { kind: 'question', sourceType: 'agent_question', payload: {}, textInput: { label: 'Answer', required: true, maxBytes: 8000 } },
  choice: { kind: 'choice', sourceType: 'agent_choice', payload: {}, options: ['A', 'B'] },
  budget: { kind: 'approval', sourceType: 'budget_change', payload: { work: 'spend' }, budgetChange: { amount: 5000, currency: 'USD' } },
} as const;

/** Settings of a state-machine test file: local mail, deadlines only the test fires, no rate limits in the way. */
export function stateMachineEnv(mailDir: string): Record<string, string> {
  return {
    MAIL_TRANSPORT: 'local',
    MAIL_LOCAL_DIR: mailDir,
    TRUST_AUTO_RESOLVE_AFTER: '1',
    // Deadlines an hour out: only the test fires the timers (no worker runs in this file).
    TRUST_AUTO_RESOLVE_DELAY_MS: '3600000',
    REVIEW_REVISION_DELAY_MS: '3600000',
    RATE_WRITES_PER_MINUTE: '1000000',
    RATE_WRITES_BURST: '1000000',
    RATE_READS_PER_MINUTE: '1000000',
    RATE_READS_BURST: '1000000',
    RATE_ACCOUNT_PER_MINUTE: '1000000',
    RATE_ACCOUNT_BURST: '1000000',
  };
}

let snoozeSeq = 0;

/** One run: a fresh account, its cards made through `createCard` (so the ladder sets deadlines), then the steps. */
export async function runScenario(env: TestEnv, run: { types: CardType[]; steps: Step[] }): Promise<void> {
  const db = env.deps.db;
  const { accountId, token } = await env.tenant(['review:read', 'review:write'], 'State Machine Co');
  // One approval shipped unchanged is enough for the ladder (TRUST_AUTO_RESOLVE_AFTER=1).
  await raiseTrust(db, accountId, 'email');
  await raiseTrust(db, accountId, 'network_message');

  const ids: string[] = [];
  const model: ModelCard[] = [];
  for (const [i, type] of run.types.entries()) {
    const base = BASE[type];
    const payload = isMail(type) ? { ...base.payload, to: `person-${i}@sm.test` } : base.payload;
    const card = await createCard(env.deps, {
      id: newId('card'),
      accountId,
      title: `${type} ${i}`,
      actions: [],
      primaryLabel: '',
      ...base,
      payload,
    } as Parameters<typeof createCard>[1]);
    ids.push(card.id);
    // The ladder's own decision is under test too: email past the threshold gets a deadline; network
    // messages (trusted, but no connection on the account), questions, choices and spending never do.
    const eligible = isMail(type);
    expect(card.autoResolveAt !== null).toBe(eligible);
    model.push({
      type,
      status: 'pending',
      autoResolveAt: card.autoResolveAt,
      snoozedUntil: null,
      snoozes: [],
      ladderAt: card.autoResolveAt,
    });
  }

  const okVerbs = new Map<string, number>(ids.map((id) => [id, 0]));
  const firstClose = new Map<string, { resolvedAt: number; resolution: unknown }>();

  const act = async (i: number, op: Op, until: number, wakeAt: number | undefined): Promise<number> => {
    const id = ids[i]!;
    const m = model[i]!;
    const post = (verb: string, body: object) => env.api().post(`/api/v1/review/${id}/${verb}`).set(auth(token)).send(body);
    switch (op) {
      case 'approve':
        return (await post('answer', { action: 'approve' })).status;
      case 'answer':
        return (await post('answer', { action: 'answer', text: 'Europe first' })).status;
      case 'choose':
        return (await post('answer', { action: 'choose', optionValues: ['A'] })).status;
      case 'send':
        return (await post('send', {})).status;
      case 'snooze':
        return (await post('snooze', { until })).status;
      case 'request_changes':
        return (await post('request-changes', { text: 'shorter please' })).status;
      case 'dismiss':
        return (await post('dismiss', { reason: 'not now' })).status;
      case 'auto_resolve':
        if (m.ladderAt !== null) await autoResolve(env.deps, accountId, id, m.ladderAt);
        return 0;
      case 'wake':
      case 'stale_wake':
        if (wakeAt !== undefined) await wakeCard(env.deps, accountId, id, wakeAt);
        return 0;
    }
  };

  const check = async (i: number) => {
    const id = ids[i]!;
    const m = model[i]!;
    const res = await env.api().get(`/api/v1/review/${id}`).set(auth(token));
    expect(res.status).toBe(200);
    const item = res.body.item;
    const open = !TERMINAL.includes(m.status);
    // The deadline is checked while the card is open (a closed card's `autoResolveAt` is history: the
    // ladder leaves the deadline that resolved a non-mail card in place).
    expect({
      status: item.status,
      actions: item.actions,
      autoResolveAt: open ? item.autoResolveAt : null,
      snoozedUntil: item.snoozedUntil,
    }).toEqual({
      status: m.status,
      actions: modelActions(m.type, m.status),
      autoResolveAt: open ? m.autoResolveAt : null,
      snoozedUntil: m.snoozedUntil,
    });
    if (TERMINAL.includes(m.status)) {
      expect(item.resolvedAt).toEqual(expect.any(Number));
      const first = firstClose.get(id);
      if (first) expect({ resolvedAt: item.resolvedAt, resolution: item.resolution }).toEqual(first);
      else firstClose.set(id, { resolvedAt: item.resolvedAt, resolution: item.resolution });
    } else {
      expect(item.resolution).toBeNull();
    }
  };

  for (const s of run.steps) {
    const m = model[s.card]!;
    const until = Date.now() + 3_600_000 + ++snoozeSeq;
    // The wake job fired: the latest snooze's (`wake`) or the first one's, stale once re-snoozed.
    const wakeAt = (op: Op) => (op === 'wake' ? m.snoozes.at(-1) : op === 'stale_wake' ? m.snoozes[0] : undefined);
    if (s.race === null) {
      const expected = clone(m);
      const want = step(expected, s.op, until, wakeAt(s.op));
      const got = await act(s.card, s.op, until, wakeAt(s.op));
      expect(got).toBe(want.status);
      if (want.status === 200) okVerbs.set(ids[s.card]!, okVerbs.get(ids[s.card]!)! + 1);
      model[s.card] = expected;
    } else {
      // Two things at once on one card: the result must be one of the two serial orders.
      const untilB = until + 1;
      const [wa, wb] = [wakeAt(s.op), wakeAt(s.race)];
      const [gotA, gotB] = await Promise.all([act(s.card, s.op, until, wa), act(s.card, s.race, untilB, wb)]);
      const orders = [
        (() => {
          const c = clone(m);
          const a = step(c, s.op, until, wa);
          const b = step(c, s.race!, untilB, wb);
          return { c, a, b };
        })(),
        (() => {
          const c = clone(m);
          const b = step(c, s.race!, untilB, wb);
          const a = step(c, s.op, until, wa);
          return { c, a, b };
        })(),
      ];
      const stored = (await row(env, 'review_cards', { id: ids[s.card] })) as { status: string; snoozed_until: string | null };
      const match = orders.find(
        (o) =>
          o.a.status === gotA &&
          o.b.status === gotB &&
          o.c.status === stored.status &&
          (o.c.snoozedUntil ?? null) === (stored.snoozed_until === null ? null : Number(stored.snoozed_until)),
      );
      expect(
        match,
        `race ${s.op} | ${s.race} on a ${m.type} card that was ${m.status}: got ${gotA}/${gotB}, card ${stored.status}`,
      ).toBeDefined();
      const ok = [match!.a, match!.b].filter((o) => o.status === 200).length;
      okVerbs.set(ids[s.card]!, okVerbs.get(ids[s.card]!)! + ok);
      model[s.card] = match!.c;
    }
    for (let i = 0; i < ids.length; i++) await check(i);
  }

  // Exactly one resolution: one audit entry per verb that answered 200 (a lost race wrote nothing),
  // one `sent` channel event per sent mail card, one settled fence, and nothing for the rest.
  for (const [i, id] of ids.entries()) {
    const m = model[i]!;
    const audits = await rows(env, 'audit_log', { account_id: accountId, target_id: id });
    expect(audits).toHaveLength(okVerbs.get(id)!);
    const fences = await rows(env, 'shipments', { account_id: accountId, card_id: id });
    const sent = fences.filter((f) => f.status === 'sent');
    expect(sent).toHaveLength(m.status === 'sent' ? 1 : 0);
    expect(fences.filter((f) => f.status !== 'sent')).toEqual([]);
    const events = fences.length
      ? await rows(env, 'channel_events', { account_id: accountId }).whereIn(
          'ref_id',
          fences.map((f) => f.id),
        )
      : [];
    expect(events).toHaveLength(m.status === 'sent' ? 1 : 0);
  }
}

/** The whole suite, for npm test (a few short runs) and test:chaos (many long ones): own env, own mail dir. */
export function stateMachineSuite(title: string, o: { cards: number; steps: number; runs: number; timeoutMs: number }): void {
  const mailDir = `/tmp/gas-state-machine-${o.runs}-${process.pid}-${Date.now()}`;
  it.override('options', { env: stateMachineEnv(mailDir) });
  afterAll(async () => {
    await rm(mailDir, { recursive: true, force: true });
  });
  describe(title, () => {
    it(
      'keeps actions consistent with status and resolves each card exactly once over random interleavings',
      async ({ env }) => {
        await fc.assert(
          fc.asyncProperty(runArb(o.cards, o.steps), (run) => runScenario(env, run)),
          { numRuns: o.runs },
        );
      },
      o.timeoutMs,
    );
  });
}
