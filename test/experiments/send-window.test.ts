import { describe, expect } from 'vitest';
import { SendResponse } from '../../api/routes/review.schemas.js';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { withAdoptedDefaults } from '../../src/experiments/adopted-defaults.js';
import { PROPOSE_EXPERIMENT_ARGS, proposeExperiment as proposeTool } from '../../src/agent/experiments/propose-experiment.js';
import { agentDoors } from '../../workers/agent-turns.js';
import { draftExperimentMail, lookAtExperiment, proposeExperiment } from '../../src/experiments/experiments.service.js';
import { fileWork } from '../../src/agent/tools/file-work.js';
import { emailAdapter } from '../../src/channels/email.adapter.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import {
  checkWindows,
  exposeSent,
  hhmm,
  minuteOfDay,
  nextOpening,
  parseWindow,
  type SendWindow,
} from '../../src/experiments/variants/send-window.js';
import { setApproval } from '../../src/review/approval.service.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { fenceWork, settleSent } from '../../src/shipping/fence.service.js';
import { sendCard } from '../../src/shipping/ship-card.service.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { auth } from '../helpers/auth.js';
import { row, rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// A send-window experiment below the API where time matters: its windows are set around the real clock (A open now,
// B opening in about two hours, in Asia/Tokyo), the maintenance pass is given its `now`, a person's approval is given
// the instant it was made, and exposures are recorded at the instant the fence would record them. Nothing sleeps.

it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }));

const ZONE = 'Asia/Tokyo';
const T0 = Date.now();
const HOUR = 3_600_000;
const local = minuteOfDay(ZONE, T0);
const clock = (m: number) => hhmm(((m % 1440) + 1440) % 1440);
/** Open from an hour ago to an hour ahead. */
const A = `${clock(local - 60)}–${clock(local + 60)}`;
/** Opens in two hours, for an hour. */
const B = `${clock(local + 120)}–${clock(local + 180)}`;
const win = (t: string) => parseWindow(t) as SendWindow;

const draft = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const copiesTo = (smtp: TestSmtp, to: string) => smtp.received.filter((m) => m.to.includes(to)).length;

async function contacts(env: TestEnv, accountId: string, n = 120) {
  for (let i = 0; i < n; i++) await buildLead(env.deps.db, accountId, { contacts: [{ email: `person${i}@co${i}.test` }] });
}

const propose = (env: TestEnv, accountId: string, windows: string[], timeZone?: string) =>
  proposeExperiment(
    env.deps.db,
    { accountId, turnId: null, fromOutside: false },
    {
      thing: 'send_window',
      topic: 'onboarding',
      draft,
      challengers: [],
      windows,
      baselineRate: 0.1,
      minimumDetectableEffect: 0.4,
      ...(timeZone ? { timeZone } : {}),
    },
  );

describe('a send-window experiment', () => {
  it('refuses windows it cannot run, with nothing written; the tool schema takes windows', async ({ tenant, env }) => {
    const { accountId } = await tenant;
    await contacts(env, accountId, 10);
    const refused = [
      [['09:00–11:00', '10:30–12:00'], 'UTC', 'the windows 09:00–11:00 UTC and 10:30–12:00 UTC overlap'],
      [['22:00–02:00', '01:00–03:00'], 'UTC', 'the windows 22:00–02:00 UTC and 01:00–03:00 UTC overlap'],
      [['09:00–09:20', '12:00–13:00'], 'UTC', 'the window 09:00–09:20 UTC is shorter than 30 minutes'],
      [['09:00–11:00', '12:00–13:00'], 'Mars/Olympus', '"Mars/Olympus" is not a time zone name (use an IANA name such as Europe/Berlin)'],
      [['09:00–11:00', '12:00–13:00'], '+09:00', '"+09:00" is not a time zone name (use an IANA name such as Europe/Berlin)'],
      [['09:00–11:00'], 'UTC', 'a send-window experiment compares 2 to 4 windows'],
      [['9am–11am', '12:00–13:00'], 'UTC', '"9am–11am" is not a window written HH:MM–HH:MM'],
    ] as const;
    for (const [windows, zone, why] of refused) expect(await propose(env, accountId, [...windows], zone)).toBe(why);
    expect(await rows(env, 'experiments', { account_id: accountId })).toEqual([]);
    expect(await rows(env, 'review_cards', { account_id: accountId })).toEqual([]);
    // Midnight may be crossed; a zone's case is Intl's; UTC when none is named.
    expect(checkWindows(['22:00-02:00', '02:00–04:00'], 'europe/berlin')).toEqual([
      '22:00–02:00 Europe/Berlin',
      '02:00–04:00 Europe/Berlin',
    ]);
    expect(checkWindows(['08:00–09:00', '17:00–18:00'])).toEqual(['08:00–09:00 UTC', '17:00–18:00 UTC']);
    // The next opening on the local clock, across the spring-forward of 29 March 2026 in Berlin.
    expect(nextOpening(win('09:00–11:00 Europe/Berlin'), Date.UTC(2026, 2, 28, 12))).toBe(Date.UTC(2026, 2, 29, 7));
    expect(nextOpening(win('02:30–04:00 Europe/Berlin'), Date.UTC(2026, 2, 28, 12))).toBe(Date.UTC(2026, 2, 29, 1));

    const args = PROPOSE_EXPERIMENT_ARGS.parse({
      thing: 'send_window',
      topic: 'onboarding',
      ...draft,
      windows: ['08:00–10:00', '16:00–18:00'],
      timeZone: 'Europe/Berlin',
    });
    expect(args).toMatchObject({ challengers: [], windows: ['08:00–10:00', '16:00–18:00'] });
    const toolEnv = {
      db: env.deps.db,
      accountId,
      turnId: 'turn_none',
      fromOutside: false,
      config: env.deps.config,
      onReply: async () => undefined,
      doors: agentDoors,
    };
    await expect(proposeTool.handler({ ...args, challengers: ['Quick question'] }, toolEnv)).rejects.toThrow(
      'no experiment was proposed: a send window takes windows, not challengers',
    );
    await expect(proposeTool.handler({ ...args, windows: ['08:00–10:00'] }, toolEnv)).rejects.toThrow(
      'no experiment was proposed: a send-window experiment compares 2 to 4 windows',
    );
    expect(await rows(env, 'experiments', { account_id: accountId })).toEqual([]);
  });

  it('drafts each contact in its window, holds a send approved outside it, counts exposures per window, adopts the winner', async ({
    tenant,
    env,
    smtp,
  }) => {
    const { accountId, token } = await tenant;
    await contacts(env, accountId);
    const out = await propose(env, accountId, [A, B], ZONE);
    if (typeof out === 'string') throw new Error(out);
    const proposal = await row(env, 'review_cards', { account_id: accountId, id: out.cardId });
    expect(proposal.prompt).toContain("Each contact's mail is drafted while its variant's window is open and goes out only inside it");
    expect((await approveCard(env, token, out.cardId)).status).toBe(200);
    await runFollowUps(env.deps);
    const repo = experimentsRepository(env.deps.db);
    const e = (await repo.get(accountId, out.id))!;
    expect(e.plan.variants.map((v) => v.value)).toEqual([`${A} ${ZONE}`, `${B} ${ZONE}`]);
    const assigned = await repo.assignments(accountId, out.id);
    const ofKey = (k: string) => assigned.filter((a) => a.variant_key === k).map((a) => a.contact);

    // Now only A's window is open: only A's contacts are drafted, each card carrying its window.
    expect(await draftExperimentMail(env.deps.db, e, 500, T0)).toBe(ofKey('A').length);
    const cardsNow = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
    expect(cardsNow.map((c) => c.payload.to).sort()).toEqual(ofKey('A').sort());
    expect(new Set(cardsNow.map((c) => c.payload.sendWindow))).toEqual(new Set([`${A} ${ZONE}`]));
    // Two and a half hours on, B's window is open and A's closed: B's contacts are drafted, once.
    expect(await draftExperimentMail(env.deps.db, e, 500, T0 + 2.5 * HOUR)).toBe(ofKey('B').length);
    expect(await draftExperimentMail(env.deps.db, e, 500, T0 + 2.5 * HOUR)).toBe(0);
    const cards = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' }).orderBy('id');
    expect(cards).toHaveLength(assigned.length);
    const byContact = new Map((await repo.assignments(accountId, out.id)).map((a) => [a.contact, a]));
    for (const c of cards) {
      const key = byContact.get(c.payload.to)!.variant_key;
      expect(c.payload.sendWindow).toBe(`${key === 'A' ? A : B} ${ZONE}`);
      expect(c.payload.draft).toEqual(draft);
    }
    const [a1, a2] = cards.filter((c) => c.payload.sendWindow.startsWith(A));
    const [b1, b2] = cards.filter((c) => c.payload.sendWindow.startsWith(B));

    // A person sends an A card while its window is open: it goes out now.
    const sent = await env.api().post(`/api/v1/review/${a1.id}/send`).set(auth(token)).send({});
    expect(SendResponse.parse(sent.body)).toMatchObject({ status: 'sent', to: a1.payload.to, decidedBy: 'person' });
    expect(copiesTo(smtp, a1.payload.to)).toBe(1);

    // A person sends a B card now, outside its window: the approval is kept, nothing goes out until it opens.
    // 200 would say the provider took it: the answer is a settled 409 that says the approval is kept, and when it goes out.
    const held = await env.api().post(`/api/v1/review/${b1.id}/send`).set(auth(token)).send({});
    const opens = nextOpening(win(`${B} ${ZONE}`), Date.now());
    expect(held.status).toBe(409);
    expect(held.body).toEqual({
      error: 'rejected',
      message:
        `not sent now: this mail goes out only inside its send window, ${B} ${ZONE}; your approval is kept and it goes out ` +
        `when the window opens, at ${new Date(opens).toISOString()} (dismiss or snooze the card to stop that)`,
    });
    // Sent again, the same answer: nothing more is written.
    const again = await env.api().post(`/api/v1/review/${b1.id}/send`).set(auth(token)).send({});
    expect(again.status).toBe(409);
    expect(again.body.message).toBe(held.body.message);
    let b1Card = (await cardsRepository(env.deps.db).find(accountId, b1.id))!;
    expect(b1Card).toMatchObject({ status: 'pending', autoResolveAt: opens });
    expect(b1Card.detail).toMatchObject({ autoResolve: { at: opens, by: 'person' } });
    expect((b1Card.detail as { autoResolve: { reason: string } }).autoResolve.reason).toContain(`outside its send window ${B} ${ZONE}`);
    // Its timer fired early (clocks apart): still outside the window, it waits again for the same opening.
    expect(await autoResolve(env.deps, accountId, b1.id, opens)).toBe('held');
    b1Card = (await cardsRepository(env.deps.db).find(accountId, b1.id))!;
    expect(b1Card).toMatchObject({ status: 'pending', autoResolveAt: opens });
    expect(copiesTo(smtp, b1.payload.to)).toBe(0);

    // An A card a person approved two hours ago, before its window opened, was held for the opening ...
    const earlier = (await cardsRepository(env.deps.db).find(accountId, a2.id))!;
    const approved = await sendCard(env.deps, null, accountId, a2.id, { decidedBy: 'person', now: T0 - 2 * HOUR });
    const opened = nextOpening(win(`${A} ${ZONE}`), T0 - 2 * HOUR);
    expect(approved).toMatchObject({ status: 'held', sendAt: opened });
    expect(opened).toBeLessThanOrEqual(T0);
    expect(copiesTo(smtp, a2.payload.to)).toBe(0);
    // ... and its timer at the opening ships it through the fenced path, as the person's, exactly once.
    expect(await autoResolve(env.deps, accountId, a2.id, opened)).toBe('sent');
    expect(await autoResolve(env.deps, accountId, a2.id, opened)).toBe('noop');
    expect((await env.api().post(`/api/v1/review/${a2.id}/send`).set(auth(token)).send({})).status).toBe(409);
    expect(copiesTo(smtp, a2.payload.to)).toBe(1);
    const a2Card = (await cardsRepository(env.deps.db).find(accountId, a2.id))!;
    expect(a2Card).toMatchObject({ status: 'sent', version: earlier.version });
    expect(a2Card.resolution).toMatchObject({ action: 'send', by: 'person' });

    // A B card whose send was fenced in its window but settled now (its answer lost over an outage): not counted.
    const fence = await env.deps.db.transaction(async (trx) => {
      const card = (await cardsRepository(trx).transition(accountId, b2.id, { statuses: ['pending'] }, { status: 'sending' }))!;
      const adapter = emailAdapter(env.deps.config, env.deps.db);
      return fenceWork(trx, adapter, card, adapter.workOf(card), { step: 0, decidedBy: 'person' });
    });
    expect(await settleSent(env.deps.db, fence, 'relay-id', { unchanged: true, onSent: env.deps.onSent })).toBe(true);
    const b2Row = (await repo.assignments(accountId, out.id)).find((a) => a.card_id === b2.id)!;
    expect(b2Row.exposed_at).toBeNull();
    expect(b2Row.skipped).toMatch(new RegExp(`^sent at \\d\\d:\\d\\d ${ZONE}, outside its window ${B} ${ZONE}$`));

    // Every other mail goes out in its own window (recorded as the fence records a send, at that instant); B's
    // contacts reply far more often than A's.
    const inB = nextOpening(win(`${B} ${ZONE}`), T0) + 10 * 60_000;
    const replies: { accountId: string; cardId: string; positive: boolean; at: number }[] = [];
    let n = 0;
    for (const c of cards) {
      if ([a1.id, a2.id, b2.id].includes(c.id)) continue;
      const isB = c.payload.sendWindow.startsWith(B);
      const at = isB ? inB : T0;
      await exposeSent(env.deps.db, accountId, c, at);
      if (n++ % (isB ? 2 : 20) === 0) replies.push({ accountId, cardId: c.id, positive: true, at: at + 60_000 });
    }
    await repo.replied(replies);
    const { counts, sent: sentPer } = await repo.counts(e, T0 + 4 * HOUR);
    expect(counts.map((c) => c.exposures)).toEqual([ofKey('A').length, ofKey('B').length - 1]);
    expect(sentPer).toEqual([ofKey('A').length, ofKey('B').length - 1]);
    expect(counts[1]!.outcomes).toBeGreaterThan(counts[0]!.outcomes);

    // Every exposure matured, none pending: the look decides, and the winner card cites each window's figures.
    expect(await lookAtExperiment(env.deps.db, e, T0 + 30 * HOUR, HOUR)).toBe('winner');
    const winner = (await row(env, 'review_cards', { account_id: accountId, source_type: 'experiment_winner' }))!;
    expect(winner.title).toBe('Use B as the time of day the mail is sent for "onboarding"');
    expect(winner.payload).toMatchObject({ thing: 'send_window', winner: 'B', value: `${B} ${ZONE}` });
    expect(winner.payload.figures.map((f: { key: string; exposures: number }) => [f.key, f.exposures])).toEqual([
      ['A', counts[0]!.exposures],
      ['B', counts[1]!.exposures],
    ]);
    expect(winner.prompt).toContain(`Approve to make "${B} ${ZONE}" the default for later mail about onboarding.`);
    const res = await env.api().get('/api/v1/results').set(auth(token));
    const shown = ResultsResponse.parse(res.body).results.experiments.find((x) => x.id === out.id)!;
    expect(shown).toMatchObject({ thing: 'send_window', status: 'decided', decision: { state: 'winner', winner: 'B' } });

    // Approved, the window is the topic's default: a later mail about it carries it, and is held until it opens.
    expect((await approveCard(env, token, winner.id)).status).toBe(200);
    await runFollowUps(env.deps);
    expect(await repo.defaultFor(accountId, 'send_window', 'Onboarding')).toBe(`${B} ${ZONE}`);
    const later = await withAdoptedDefaults(
      { db: env.deps.db, accountId },
      { work: 'email', title: 'Email to later', to: 'later@new.test', ...draft, details: { topic: 'onboarding' } },
    );
    expect(later.args.details).toEqual({ topic: 'onboarding', sendWindow: `${B} ${ZONE}` });
    expect(later.used).toBe(
      `; it uses the default an experiment decided for "onboarding": the time of day the mail is sent "${B} ${ZONE}"`,
    );
    const { card } = await fileWork(env.deps.db, { accountId, turnId: null, fromOutside: false, ...later.args, work: 'email' });
    const laterSend = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(laterSend.status).toBe(409);
    expect(laterSend.body.message).toContain(`inside its send window, ${B} ${ZONE}; your approval is kept`);
    expect(copiesTo(smtp, 'later@new.test')).toBe(0);
  });

  it('holds mail the account lets ship without approval until its window opens, as the setting decided it', async ({
    tenant,
    env,
    smtp,
  }) => {
    const { accountId } = await tenant;
    await setApproval(env.deps.db, accountId, 'email', false);
    const to = 'setting@new.test';
    const mail = { work: 'email' as const, title: 'Email', to, ...draft, details: { sendWindow: `${B} ${ZONE}` } };
    const { card } = await fileWork(env.deps.db, { accountId, turnId: null, fromOutside: false, ...mail });
    expect(card.autoResolveAt).not.toBeNull();
    expect(await autoResolve(env.deps, accountId, card.id, card.autoResolveAt!)).toBe('held');
    const opens = nextOpening(win(`${B} ${ZONE}`), Date.now());
    const now = (await cardsRepository(env.deps.db).find(accountId, card.id))!;
    expect(now).toMatchObject({ status: 'pending', autoResolveAt: opens, detail: { autoResolve: { at: opens, by: 'setting' } } });
    // A deadline it no longer has does nothing; nothing went out.
    expect(await autoResolve(env.deps, accountId, card.id, card.autoResolveAt!)).toBe('noop');
    expect(copiesTo(smtp, to)).toBe(0);
  });
});
