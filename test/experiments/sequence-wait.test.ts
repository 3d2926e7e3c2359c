import { agentDoors } from '../../workers/agent-turns.js';
import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { draftExperimentMail, lookAtExperiment, proposeExperiment } from '../../src/experiments/experiments.service.js';
import { executeTool } from '../../src/agent/tools/tool.js';
import { addToBlocklist } from '../../src/blocklist/blocklist.service.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { inboundRepository } from '../../src/inbound/inbound.repository.js';
import { storeInbound } from '../../src/inbound/intake.service.js';
import { processInbound } from '../../src/inbound/process.service.js';
import { sequenceIdFor, sequencesRepository } from '../../src/mail/sequences.repository.js';
import { setApproval } from '../../src/review/approval.service.js';
import { shipSequenceStep } from '../../src/shipping/sequence-runner.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { answered, INTERESTED, replyMime } from '../helpers/mail-reply.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

// A sequence step's wait as the thing an experiment varies (`sequence_wait`), below the API but through the real paths:
// proposed by the agent's tool, started by approving its card, each contact drafted once as a `sequence` card whose
// follow-up 1 waits its variant's days, the first mails sent over SMTP (the fence exposes each contact), replies to the
// first mail or to a follow-up stored as MIME and processed by the inbound path, looks held back until the whole
// sequence at the longest wait and the reply window have passed, the winner card, and a later sequence using the wait.

it.override('options', ({ smtp }) => ({ env: smtpEnv(smtp) }));

const DAY = 86_400_000;
const first = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const steps = [
  { body: 'Did you get a chance to look?', delayDays: 3 },
  { body: 'Last note from me on this.', delayDays: 4 },
];
/** A wait test on follow-up 1: A waits its own 3 days, B 7 (the plan: 9 per variant, 36 contacts with room). */
const proposal = { thing: 'sequence_wait', topic: 'onboarding', ...first, steps, step: 1, challengers: ['7 days'] };
const plan = { baselineRate: 0.1, minimumDetectableEffect: 0.8 };

const toolEnv = (env: TestEnv, accountId: string) => ({
  db: env.deps.db,
  accountId,
  turnId: 'turn_none',
  fromOutside: false,
  config: env.config,
  onReply: async () => undefined,
  doors: agentDoors,
});

async function contacts(env: TestEnv, accountId: string, n: number, tag: string) {
  for (let i = 0; i < n; i++) await buildLead(env.deps.db, accountId, { contacts: [{ email: `p${i}@${tag}${i}.test` }] });
}

async function answer(env: TestEnv, token: string, cardId: string, action = 'approve') {
  const res = await env.api().post(`/api/v1/review/${cardId}/answer`).set(auth(token)).send({ action });
  expect(res.status).toBe(200);
  await runFollowUps(env.deps);
}

/** A contact's reply to the last mail it got, stored as a MIME message and run through the inbound path. */
async function reply(env: TestEnv, smtp: TestSmtp, accountId: string, contact: string) {
  const raw = smtp.received.filter((m) => m.to.includes(contact)).at(-1)!.raw;
  const to = await answered(raw);
  const id = await storeInbound(env.deps, {
    accountId,
    via: 'http',
    mailFrom: contact,
    rcptTo: [to.replyTo],
    raw: Buffer.from(replyMime(to, INTERESTED)),
  });
  await processInbound(env.deps, id);
  return (await inboundRepository(env.deps.db).find(id))!;
}

describe('an experiment on a sequence step’s wait', () => {
  it('refuses a proposal that is not a valid sequence wait test, in words, and writes nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    await contacts(env, accountId, 40, 'r');
    const by = { accountId, turnId: null, fromOutside: false };
    const propose = (draft: Record<string, unknown>, challengers: (string | number)[]) =>
      proposeExperiment(env.deps.db, by, {
        thing: 'sequence_wait',
        topic: 'onboarding',
        draft: { ...first, ...draft },
        challengers,
        ...plan,
      });
    expect(await propose({}, [7])).toBe('a sequence_wait experiment needs the sequence: its follow-ups in `steps`');
    expect(await propose({ steps, step: 3 }, [7])).toBe("`step` must name one of the sequence's 2 follow-ups (1 to 2)");
    expect(await propose({ steps }, [7])).toBe("`step` must name one of the sequence's 2 follow-ups (1 to 2)");
    expect(await propose({ steps, step: 1 }, ['61'])).toBe('each challenger is a wait in days, from one minute to 60 days; "61" is not');
    expect(await propose({ steps, step: 1 }, ['next week'])).toMatch(/; "next week" is not$/);
    expect(await propose({ steps, step: 2 }, ['4 days'])).toBe('the variants must differ from each other and from the draft');
    expect(await propose({ steps: [{ body: 'x', delayDays: 0 }], step: 1 }, [7])).toMatch(/^not a valid sequence \(steps\.0\.delayDays: /);
    // Through the agent's tool: the same refusal, as the tool's error.
    const r = await executeTool(
      { id: 'c1', name: 'propose_experiment', args: { ...proposal, challengers: [90] } },
      toolEnv(env, accountId),
    );
    expect(r).toMatchObject({
      ok: false,
      result: 'no experiment was proposed: each challenger is a wait in days, from one minute to 60 days; "90" is not',
    });
    expect(await rows(env, 'experiments', { account_id: accountId })).toEqual([]);
    expect(await rows(env, 'review_cards', { account_id: accountId })).toEqual([]);
  });

  it('proposes up to four waits, the control first, and plans the look after the longest', async ({ env }) => {
    const { accountId } = await env.tenant();
    await contacts(env, accountId, 84, 'f');
    const args = { ...proposal, ...plan, challengers: ['0.5', 14, '2.5 days'] };
    const out = await executeTool({ id: 'c1', name: 'propose_experiment', args }, toolEnv(env, accountId));
    expect(out).toMatchObject({ ok: true });
    const [e] = await rows(env, 'experiments', { account_id: accountId });
    expect(e.plan.variants.map((v: { key: string; description: string }) => `${v.key}: ${v.description}`)).toEqual([
      'A: a 3-day wait',
      'B: a 12-hour wait',
      'C: a 14-day wait',
      'D: a 2.5-day wait',
    ]);
    const [card] = await rows(env, 'review_cards', { account_id: accountId, source_type: 'experiment' });
    expect(card.prompt).toContain('only once 18 days (the whole sequence at the longest wait) and the reply window have passed');
    const more = { ...args, challengers: [1, 2, 4, 5] };
    expect(await executeTool({ id: 'c2', name: 'propose_experiment', args: more }, toolEnv(env, accountId))).toMatchObject({ ok: false });
  });

  it('drafts one sequence per contact with its wait, counts replies to any step once the longest wait ran, adopts the winner', async ({
    env,
    smtp,
  }) => {
    const db = env.deps.db;
    const { accountId, token } = await env.tenant();
    await contacts(env, accountId, 40, 'w');
    const proposed = await executeTool({ id: 'c1', name: 'propose_experiment', args: { ...proposal, ...plan } }, toolEnv(env, accountId));
    expect(proposed).toMatchObject({ ok: true });
    const [, id, cardId] = /^experiment (\S+) is waiting for review as card (\S+);/.exec(proposed.result)!;
    const card = (await env.api().get(`/api/v1/review/${cardId}`).set(auth(token))).body.item;
    expect(card.title).toBe('Experiment: the wait before follow-up 1 for "onboarding"');
    expect(card.prompt).toContain(
      'Variants of the wait before follow-up 1 of mail about onboarding: A: a 3-day wait (the current default); B: a 7-day wait.',
    );
    expect(card.prompt).toContain(
      'only the wait before follow-up 1 differs. A contact counts from its first mail going out, and only once 11 days',
    );
    expect(card.prompt).toContain('its mail then waits under your sequence approval settings');
    await answer(env, token, cardId!);
    const repo = experimentsRepository(db);
    const e = (await repo.get(accountId, id!))!;
    expect(e).toMatchObject({ status: 'running', thing: 'sequence_wait', draft: { ...first, steps, step: 1 } });
    expect(e.plan.variants.map((v) => [v.key, v.value])).toEqual([
      ['A', '3'],
      ['B', '7'],
    ]);

    // Drafting follows the sequence approval setting (email's is off here), and leaves out a blocked contact.
    await setApproval(db, accountId, 'email', false);
    const blocked = (await repo.assignments(accountId, e.id))[0]!.contact;
    await addToBlocklist(db, accountId, [blocked], 'api', null);
    await draftExperimentMail(db, e, 500);
    expect(await draftExperimentMail(db, e, 500)).toBe(0);
    const assigned = await repo.assignments(accountId, e.id);
    expect(assigned.find((a) => a.contact === blocked)).toMatchObject({ skipped: 'on the block list', card_id: null });
    const live = assigned.filter((a) => a.contact !== blocked);
    const cards = await rows(env, 'review_cards', { account_id: accountId, source_type: 'sequence' });
    expect(cards.map((c) => c.id).sort()).toEqual(live.map((a) => a.card_id).sort());
    const waitOf = (key: string) => (key === 'A' ? 3 : 7);
    for (const c of cards) {
      const a = live.find((x) => x.card_id === c.id)!;
      expect(c).toMatchObject({ status: 'pending', auto_resolve_at: null });
      expect(c.payload).toMatchObject({ work: 'sequence', to: a.contact, draft: first, experimentId: e.id, variant: a.variant_key });
      expect(c.payload.steps.map((s: { delayDays: number }) => s.delayDays)).toEqual([waitOf(a.variant_key), 4]);
    }

    // Each first mail goes out on approval: its contact is exposed, and its follow-up 1 is due after its variant's wait.
    for (const c of cards) await answer(env, token, c.id);
    const exposed = await repo.assignments(accountId, e.id);
    const sequences = sequencesRepository(db);
    for (const a of live) {
      const at = Number(exposed.find((x) => x.contact === a.contact)!.exposed_at);
      const seq = (await sequences.find(accountId, sequenceIdFor(a.card_id!)))!;
      expect(seq).toMatchObject({ status: 'active', nextStep: 1 });
      expect(Math.abs(seq.nextAt! - at - waitOf(a.variant_key) * DAY)).toBeLessThan(60_000);
    }
    const lastExposed = Math.max(...exposed.filter((a) => a.exposed_at).map((a) => Number(a.exposed_at)));

    // Replies: every B contact (two of them to follow-up 1, shipped early here), one A contact.
    const byKey = (k: string) => live.filter((a) => a.variant_key === k);
    for (const a of byKey('B').slice(0, 2)) {
      const seqId = sequenceIdFor(a.card_id!);
      await db('mail_sequences')
        .where({ account_id: accountId, id: seqId })
        .update({ next_at: Date.now() - 1 });
      expect(await shipSequenceStep(env.deps, accountId, seqId, 1)).toBe('shipped');
      const row = await reply(env, smtp, accountId, a.contact);
      const [thread] = await rows(env, 'mail_threads', { account_id: accountId, send_id: row.sendId });
      expect(thread).toMatchObject({ card_id: a.card_id, step: 1 });
    }
    for (const a of [...byKey('B').slice(2), byKey('A')[0]!])
      expect(await reply(env, smtp, accountId, a.contact)).toMatchObject({ kind: 'reply' });
    const replied = (await repo.assignments(accountId, e.id)).filter((a) => a.replied_at);
    expect(replied.length).toBe(byKey('B').length + 1);

    // Not judged before the whole sequence at the longest wait (7 + 4 days) and the reply window have run, for
    // either variant: A's own sequence (3 + 4 days) ran long before.
    const window = env.config.experiments.replyWindowMs;
    const early = lastExposed + 11 * DAY + window - 60_000;
    expect((await repo.counts(e, early - window)).counts).toEqual([
      { exposures: 0, outcomes: 0 },
      { exposures: 0, outcomes: 0 },
    ]);
    expect(await lookAtExperiment(db, e, early, window)).toBe('collecting');
    expect((await repo.get(accountId, e.id))!).toMatchObject({ status: 'running', looks: [], resultCardId: null });

    // Once it has: every exposure counts, the rule decides B, and the winner card cites the figures.
    const late = lastExposed + 11 * DAY + window + 60_000;
    expect(await lookAtExperiment(db, e, late, window)).toBe('winner');
    const decided = (await repo.get(accountId, e.id))!;
    const winner = (await env.api().get(`/api/v1/review/${decided.resultCardId}`).set(auth(token))).body.item;
    expect(winner).toMatchObject({ sourceType: 'experiment_winner', title: 'Use B as the wait before follow-up 1 for "onboarding"' });
    expect(winner.payload).toMatchObject({ thing: 'sequence_wait', winner: 'B', value: '7' });
    const figures = winner.payload.figures as { key: string; exposures: number; outcomes: number }[];
    expect(figures.map((f) => [f.key, f.exposures, f.outcomes])).toEqual([
      ['A', byKey('A').length, 1],
      ['B', byKey('B').length, byKey('B').length],
    ]);
    expect(winner.summary).toContain(`replies 1/${byKey('A').length} `);
    expect(winner.summary).toContain(` vs ${byKey('B').length}/${byKey('B').length} `);

    // /results shows it with its thing and waits.
    const results = ResultsResponse.parse((await env.api().get('/api/v1/results').set(auth(token))).body).results.experiments;
    expect(results.find((x) => x.id === e.id)).toMatchObject({ thing: 'sequence_wait', decision: { state: 'winner', winner: 'B' } });
    expect(results.find((x) => x.id === e.id)!.variants.map((v) => v.description)).toEqual(['a 3-day wait', 'a 7-day wait']);

    // Approved: a later sequence about the topic, by the agent's ship tool, waits 7 days before follow-up 1, and says so.
    await answer(env, token, decided.resultCardId!);
    const to = 'later@new.test';
    const args = {
      work: 'sequence',
      title: `Sequence to ${to}`,
      to,
      ...first,
      details: { topic: 'Onboarding', steps: [...steps].reverse() },
    };
    const shipped = await executeTool({ id: 's1', name: 'ship', args }, toolEnv(env, accountId));
    expect(shipped.result).toMatch(/^sequence is waiting for review as card \S+; nothing was shipped; it uses the default an experiment/);
    expect(shipped.result).toMatch(/decided for "Onboarding": the wait before follow-up 1 "7 days"$/);
    const [later] = await rows(env, 'review_cards', { account_id: accountId, source_type: 'sequence' }).whereRaw("payload->>'to' = ?", [
      to,
    ]);
    expect(later.payload.steps.map((s: { delayDays: number }) => s.delayDays)).toEqual([7, 3]);
  }, 120_000);
});
