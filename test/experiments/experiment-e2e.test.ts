import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { setApproval } from '../../src/review/approval.service.js';
import { buildLead } from '../helpers/factories.js';
import { type ChatRequest, completion, llmEnv } from '../helpers/fake-llm.js';
import { it } from '../helpers/fixture.js';
import { answered, INTERESTED, replyMime } from '../helpers/mail-reply.js';
import { until } from '../helpers/processes.js';
import { smtpSend } from '../helpers/smtp-client.js';
import { type ReceivedMail, smtpEnv } from '../helpers/smtp-server.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

/**
 * An experiment end to end: proposed for an account with 300 never-mailed contacts, approved by a person through the
 * API, its mail running without approval (the account's setting) through the real send path to an SMTP server on
 * loopback, the first wave's contacts (the plan's minimum per variant: the first look's sample) getting one mail each
 * with their own variant's subject; the contacts answer with real MIME replies over SMTP to the service's inbound
 * listener (In-Reply-To and References naming our Message-ID), variant B's far more often than A's; the maintenance
 * pass looks once the wave's mail is a few seconds old, decides, files the winner card with its figures, and mails
 * nobody else (the contacts spared are on /results); a person approves it and a later draft about the topic gets the
 * winning subject.
 */
it.override('options', ({ smtp, llm }) => ({
  env: {
    ...smtpEnv(smtp),
    ...llmEnv(llm, { LLM_TIMEOUT_MS: '5000', LLM_MAX_RETRIES: '2', LLM_BACKOFF_MS: '20' }),
    AGENT_WAIT_POLL_MS: '100',
    MAINTENANCE_SWEEP_MS: '250',
    CARD_SWEEP_MS: '250',
    EXPERIMENT_DRAFT_BATCH: '300',
    // Exposures count in a look once their mail is this old: long enough for each reply to come back first.
    EXPERIMENT_REPLY_WINDOW_SECONDS: '8',
    INBOUND_SMTP_MESSAGES_PER_MINUTE: '100000',
  },
  pools: ['agent-turns', 'card-timers', 'shipments', 'inbound-mail', 'maintenance'],
}));

const draft = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };
const CHALLENGER = 'Quick question about onboarding';
/** The plan's audience: 117 per variant planned, with room for an uneven split (experiments.service.ts withRoom). */
const N = 300;
const LATER = 'someone.new@later.test';

/** The last message a person (or the service, for a wake) put to the model. */
const lastUser = (req: ChatRequest) => req.body.messages.filter((m) => m.role === 'user').at(-1)?.content ?? '';

/**
 * The stand-in model: proposes the experiment when asked to test subject lines, drafts the later mail with the ship
 * tool, classifies replies as interested, and answers anything else (a wake for each reply) with words only.
 */
function model(req: ChatRequest) {
  const last = req.body.messages.at(-1)!;
  if (lastUser(req).startsWith('Classify this reply')) return { body: completion('{"replyKind":"interested"}') };
  if (last.role === 'tool') {
    return { body: completion(last.content?.includes('experiment') ? 'The experiment is waiting for your approval.' : 'Drafted.') };
  }
  if (lastUser(req).includes('test two subject lines for onboarding')) {
    const args = {
      thing: 'mail_subject',
      topic: 'onboarding',
      ...draft,
      challengers: [CHALLENGER],
      baselineRate: 0.1,
      minimumDetectableEffect: 0.2,
    };
    return { body: completion(null, [{ id: 'call_propose', name: 'propose_experiment', args }]) };
  }
  if (lastUser(req).includes(`draft an email to ${LATER}`)) {
    const args = {
      work: 'email',
      title: 'Onboarding follow-up',
      to: LATER,
      subject: 'Onboarding, again',
      body: draft.body,
      details: { topic: 'onboarding' },
    };
    return { body: completion(null, [{ id: 'call_ship', name: 'ship', args }]) };
  }
  return { body: completion('Noted.') };
}
const numberOf = (contact: string) => Number(/^person(\d+)@/.exec(contact)![1]);
/** Who answers: two in three of variant B's contacts, one in ten of A's (decided by the contact, so a run repeats). */
const answers = (contact: string, subject: string) => (subject === CHALLENGER ? numberOf(contact) % 3 !== 0 : numberOf(contact) % 10 === 0);

describe('an experiment, end to end through the API, SMTP out and SMTP back', () => {
  it('splits the sends by variant, decides on the replies, and a person adopts the winner for later drafts', async ({
    env,
    inbound,
    llm,
    smtp,
  }) => {
    const db = env.deps.db;
    const { accountId, token } = await env.tenant(['agent:message', 'review:read', 'review:write', 'results:read'], 'Subject Co');
    await setApproval(db, accountId, 'email', false);
    for (let i = 0; i < N; i++) await buildLead(db, accountId, { contacts: [{ email: `person${i}@e2e${i}.test` }] });

    // The contacts' side: each mail that arrives is answered (or not) over SMTP to our inbound listener.
    const replies: Promise<void>[] = [];
    const replied = new Set<string>();
    const onMail = (m: ReceivedMail) => {
      replies.push(
        (async () => {
          const a = await answered(m.raw);
          if (!a.to.startsWith('person') || !answers(a.to, a.subject)) return;
          const res = await smtpSend(inbound.port, { from: a.to, to: [a.replyTo], raw: replyMime(a, INTERESTED) });
          expect(res.code).toBe(250);
          replied.add(a.to);
        })(),
      );
    };
    smtp.events.on('accepted', onMail);
    try {
      // The agent (the LLM brain, through the stand-in model) proposes the experiment with its tool; a person approves it.
      llm.script(model);
      const said = await env
        .api()
        .post('/api/v1/agent/messages')
        .set(auth(token))
        .send({ text: 'test two subject lines for onboarding', waitSeconds: 20 });
      expect(said.status).toBe(200);
      expect(said.body.message).toMatchObject({ status: 'replied', replies: [{ text: 'The experiment is waiting for your approval.' }] });
      const proposed = await rows(env, 'review_cards', { account_id: accountId, source_type: 'experiment' });
      expect(proposed).toHaveLength(1);
      const out = { cardId: proposed[0].id as string, id: proposed[0].payload.experimentId as string };
      const proposal = await env.api().get(`/api/v1/review/${out.cardId}`).set(auth(token));
      expect(proposal.body.item).toMatchObject({ sourceType: 'experiment', status: 'pending' });
      expect(proposal.body.item.prompt).toContain('Stopping rule:');
      expect((await approveCard(env, token, out.cardId)).status).toBe(200);
      await runFollowUps(env.deps);

      // The maintenance pass drafts, the card sweep sends, replies come back; the pass decides.
      const repo = experimentsRepository(db);
      const decided = await until(
        async () => {
          const e = await repo.get(accountId, out.id);
          return e && e.status !== 'running' && e.resultCardId ? e : null;
        },
        240_000,
        250,
      ).catch(async () => {
        // Where it stood, so a slow machine's failure says what was still missing.
        const rows = await repo.assignments(accountId, out.id);
        const e = await repo.get(accountId, out.id);
        const where = { status: e?.status, looks: e?.looks, drafted: rows.filter((r) => r.card_id).length };
        const more = { exposed: rows.filter((r) => r.exposed_at).length, replied: rows.filter((r) => r.replied_at).length };
        throw new Error(`no decision in time: ${JSON.stringify({ ...where, ...more, delivered: smtp.received.length })}`);
      });
      expect(decided.status).toBe('decided');
      expect(decided.winnerKey).toBe('B');

      // Every contact was assigned; the first wave's each got exactly one mail, of its own variant, and nobody else any.
      const all = await repo.assignments(accountId, out.id);
      expect(all).toHaveLength(N);
      const assigned = all.filter((a) => a.card_id !== null);
      const wave = 2 * decided.plan.minimumPerVariant;
      expect(assigned).toHaveLength(wave);
      await until(async () => {
        const sent = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft', status: 'sent' });
        return sent.length === wave;
      }, 120_000);
      const got = new Map<string, string[]>();
      for (const m of smtp.received) {
        const a = await answered(m.raw);
        if (a.to.startsWith('person')) got.set(a.to, [...(got.get(a.to) ?? []), a.subject]);
      }
      expect(got.size).toBe(wave);
      const wrong = assigned.filter(
        (a) => JSON.stringify(got.get(a.contact)) !== JSON.stringify([a.variant_key === 'A' ? draft.subject : CHALLENGER]),
      );
      expect(wrong).toEqual([]);

      // The winner card: B, with the figures the decision rests on, cited as n/N.
      const card = await env.api().get(`/api/v1/review/${decided.resultCardId}`).set(auth(token));
      expect(card.status).toBe(200);
      const item = card.body.item as { sourceType: string; status: string; summary: string; payload: Record<string, unknown> };
      expect(item).toMatchObject({ sourceType: 'experiment_winner', status: 'pending' });
      const figures = item.payload.figures as { key: string; exposures: number; outcomes: number }[];
      expect(figures.map((f) => f.key)).toEqual(['A', 'B']);
      for (const f of figures) {
        expect(f.exposures).toBeGreaterThanOrEqual(decided.plan.minimumPerVariant);
        expect(item.summary).toContain(`${f.outcomes}/${f.exposures}`);
      }
      expect(figures[1]!.outcomes / figures[1]!.exposures).toBeGreaterThan(figures[0]!.outcomes / figures[0]!.exposures);
      expect(item.payload).toMatchObject({ winner: 'B', value: CHALLENGER });

      // The replies were matched to their contacts' variants: the outcomes counted are those of the replying contacts.
      await Promise.all(replies);
      const counts = await repo.counts(decided, Date.now());
      const byKey = (k: string) => assigned.filter((a) => a.variant_key === k);
      for (const [i, k] of ['A', 'B'].entries()) {
        expect(counts.counts[i]!.exposures).toBe(byKey(k).length);
        const outcomes = await until(async () => {
          const c = (await repo.counts(decided, Date.now())).counts[i]!.outcomes;
          return c === byKey(k).filter((a) => replied.has(a.contact)).length ? c : null;
        }, 30_000);
        expect(outcomes).toBeGreaterThan(0);
      }

      // /results shows the experiment per variant: every mail sent, matured exposures and outcomes as counted, and the
      // contacts of the plan it never mailed.
      const results = await env.api().get('/api/v1/results').set(auth(token));
      expect(results.status).toBe(200);
      const shown = ResultsResponse.parse(results.body).results.experiments.find((x) => x.id === out.id)!;
      expect(shown).toMatchObject({ status: 'decided', decision: { state: 'winner', winner: 'B' } });
      expect(shown.spared).toBe(2 * decided.plan.plannedPerVariant - wave);
      expect(shown.variants.map((v) => v.key)).toEqual(['A', 'B']);
      for (const [i, v] of shown.variants.entries()) {
        expect(v.sent).toBe(byKey(v.key).length);
        expect(v.outcomes).toBeLessThanOrEqual(byKey(v.key).filter((a) => replied.has(a.contact)).length);
        expect(v.exposures).toBeLessThanOrEqual(counts.counts[i]!.exposures);
      }

      // A person adopts the winner; a later draft about the topic uses its subject.
      expect((await approveCard(env, token, decided.resultCardId!)).status).toBe(200);
      await runFollowUps(env.deps);
      expect(await repo.defaultFor(accountId, 'mail_subject', 'Onboarding')).toBe(CHALLENGER);
      // A later draft about the topic, by the agent's ship tool, starts from the adopted subject and says so.
      const asked = await env
        .api()
        .post('/api/v1/agent/messages')
        .set(auth(token))
        .send({ text: `draft an email to ${LATER} about onboarding`, waitSeconds: 20 });
      expect(asked.body.message).toMatchObject({ status: 'replied' });
      const shipped = llm.requests.map((r) => r.body.messages.at(-1)!).find((m) => m.role === 'tool' && m.content?.includes('default'));
      expect(shipped?.content).toContain(CHALLENGER);
      const [later] = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' }).whereRaw("payload->>'to' = ?", [
        LATER,
      ]);
      expect(later.payload.draft).toEqual({ subject: CHALLENGER, body: draft.body });
    } finally {
      smtp.events.off('accepted', onMail);
      await Promise.allSettled(replies);
    }
  }, 420_000);
});
