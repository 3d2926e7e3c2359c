import { describe, expect } from 'vitest';
import { unbackedClaim, claimIn } from '../../src/agent/tools/claims.js';
import { draftExperimentMail, lookAtExperiment } from '../../src/experiments/experiments.service.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { storeInbound } from '../../src/inbound/intake.service.js';
import { buildLead } from '../helpers/factories.js';
import { completion, llmEnv, type FakeLlm } from '../helpers/fake-llm.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';

// The LLM brain drives both experiment tools through the chat-completions stand-in: it proposes a subject test, the
// person approves it, the mail goes out and replies come in, the look decides B, the person approves the winner, and a
// later draft about the topic starts from B. read_results gives the model the figures and nothing an outsider wrote.

it.override('options', ({ llm }) => agentOptions(llmEnv(llm)));
it.beforeEach(({ llm }) => {
  llm.requests.length = 0;
});

const draft = { subject: 'Onboarding', body: 'Hi there,\n\nI wanted to reach out about onboarding.\n\nBest regards' };
const propose = {
  thing: 'mail_subject',
  topic: 'onboarding',
  subject: draft.subject,
  body: draft.body,
  challengers: ['Quick question about onboarding'],
  baselineRate: 0.1,
  // A plan of 188 contacts per variant with a minimum of 100: the 380 contacts below fill both variants past it.
  minimumDetectableEffect: 0.15,
};

/** The tool message the model was sent back for `callId`. */
const toolMessage = (llm: FakeLlm, callId: string) =>
  llm.requests.flatMap((r) => r.body.messages).find((m) => m.role === 'tool' && m.tool_call_id === callId)?.content ?? '';

/** One model round calling `name`, then a plain answer. */
function scriptCall(llm: FakeLlm, id: string, name: string, args: unknown, answer = 'Done.') {
  llm.script(
    () => ({ body: completion(null, [{ id, name, args }]) }),
    () => ({ body: completion(answer) }),
  );
}

async function answer(env: AgentEnv, token: string, cardId: string, action: string) {
  const res = await env.api().post(`/api/v1/review/${cardId}/answer`).set(auth(token)).send({ action });
  await runFollowUps(env.deps);
  expect(res.status).toBe(200);
}

describe('the llm brain and experiments', () => {
  it('is offered both tools, and a refused proposal comes back as an error with nothing written', async ({ agent: env, llm }) => {
    const { token, accountId } = await env.tenant();
    await buildLead(env.deps.db, accountId, { contacts: [{ email: 'only@one.test' }] });
    scriptCall(llm, 'p0', 'propose_experiment', propose, 'Not enough contacts yet.');
    await env.say(token, 'test two subject lines for onboarding please');
    const names = llm.requests[0]!.body.tools.map((t) => t.function.name);
    expect(names).toEqual(expect.arrayContaining(['propose_experiment', 'read_results']));
    expect(toolMessage(llm, 'p0')).toMatch(/^error: no experiment was proposed: only 1 contacts could join; this plan needs at least \d+/);
    expect(await rows(env, 'experiments', { account_id: accountId })).toEqual([]);
    expect(await rows(env, 'review_cards', { account_id: accountId })).toEqual([]);
  });

  // Its work is volume, not waiting: about 1,000 rows (380 contacts drafted, exposed, replied) written one round trip
  // at a time, 8.5 s on a quiet machine and past 30 s beside another suite; its deadline is that work's, not a wait's.
  it('proposes, reads its figures without outside data, and a later draft uses the adopted winner', { timeout: 120_000 }, async ({
    agent: env,
    llm,
  }) => {
    const { token, accountId } = await env.tenant();
    // What read_results must never carry: a lead's name and company, a memory note, a reply's text.
    await buildLead(env.deps.db, accountId, {
      companyName: 'Zanzibar Widgets',
      contacts: [{ email: 'p0@co0.test', name: 'Quentin Marlowe' }],
    });
    for (let l = 0; l < 4; l++) {
      const contacts = Array.from({ length: 95 }, (_, i) => ({ email: `p${l}-${i}@co${l}.test` }));
      await buildLead(env.deps.db, accountId, { contacts });
    }
    scriptCall(llm, 'm1', 'remember', { text: 'never mention the merger with Halcyon' });
    await env.say(token, 'remember this');
    await storeInbound(env.deps, {
      accountId,
      via: 'http',
      mailFrom: 'p0@co0.test',
      rcptTo: ['reply@acme.test'],
      raw: Buffer.from('From: p0@co0.test\r\nSubject: Re: Onboarding\r\n\r\nOur budget is frozen until Persephone signs off.\r\n'),
    });

    scriptCall(llm, 'p1', 'propose_experiment', propose, 'Proposed.');
    await env.say(token, 'test two subject lines for onboarding');
    const proposed = toolMessage(llm, 'p1');
    const cardId = /as card (\S+);/.exec(proposed)?.[1];
    expect(proposed).toMatch(/^ok: experiment exp_\S+ is waiting for review as card card_\S+; nothing starts until it is approved$/);
    const [e0] = await rows(env, 'experiments', { account_id: accountId });
    expect(e0).toMatchObject({ card_id: cardId, status: 'proposed', thing: 'mail_subject', topic: 'onboarding' });

    // Approved: it starts; every contact is drafted, mailed, and B's contacts mostly reply.
    await answer(env, token, cardId!, 'approve');
    const repo = experimentsRepository(env.deps.db);
    const e = (await repo.get(accountId, e0.id))!;
    expect(e.status).toBe('running');
    await draftExperimentMail(env.deps.db, e, 500);
    const at = Date.now() - 1_000;
    const assigned = await repo.assignments(accountId, e.id);
    let n = 0;
    for (const a of assigned) {
      await repo.exposed(accountId, a.card_id!, at);
      const replies = a.variant_key === 'B' ? n++ % 10 !== 0 : n++ % 10 === 0;
      if (replies) await repo.replied([{ accountId, cardId: a.card_id!, positive: false, at }]);
    }

    scriptCall(llm, 'r1', 'read_results', {}, 'Here are the figures.');
    await env.say(token, 'how is the subject test doing');
    const read = toolMessage(llm, 'r1');
    expect(read).toMatch(/^ok: Results for the last 24 hours/);
    expect(read).toContain('your work: turns ');
    expect(read).toMatch(/- mail subject test for "onboarding" \(reply rate\): running, /);
    expect(read).toMatch(/replies \d+\/\d+ \(/);
    for (const secret of ['Halcyon', 'merger', 'Persephone', 'budget is frozen', 'Quentin', 'Marlowe', 'Zanzibar', 'p0@co0.test']) {
      expect(read).not.toContain(secret);
    }

    // The look decides B; the winner card claims a result and carries its figures, so the claim check passes it.
    expect(await lookAtExperiment(env.deps.db, (await repo.get(accountId, e.id))!, Date.now(), 0)).toBe('winner');
    const [winner] = await rows(env, 'review_cards', { account_id: accountId, source_type: 'experiment_winner' });
    const texts = [winner.title, winner.summary, winner.prompt];
    expect(claimIn(texts)).not.toBeNull();
    expect(unbackedClaim(texts, winner.payload)).toBeNull();
    await answer(env, token, winner.id, 'approve');

    // A later draft about the topic starts from the adopted subject, and the tool result says so.
    scriptCall(
      llm,
      's1',
      'ship',
      { work: 'email', to: 'new@lead.test', title: 'Email to new@lead.test: Onboarding', ...draft },
      'Drafted.',
    );
    await env.say(token, 'email new@lead.test about onboarding');
    expect(toolMessage(llm, 's1')).toMatch(/^ok: email is waiting for review as card \S+; nothing was shipped; it uses /);
    expect(toolMessage(llm, 's1')).toMatch(
      /; it uses the default an experiment decided for "Onboarding": the subject line "Quick question about onboarding"$/,
    );
    const [mail] = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' }).whereRaw("payload->>'to' = ?", [
      'new@lead.test',
    ]);
    expect(mail.payload.draft).toEqual({ subject: 'Quick question about onboarding', body: draft.body });
    expect(mail.title).toBe('Email to new@lead.test: Quick question about onboarding');
  });

  it('refuses a card that claims a result without its figures, and files one that carries them', async ({ agent: env, llm }) => {
    const { token, accountId } = await env.tenant();
    const claim = { sourceType: 'insight', title: 'Subject B won', summary: 'It lifted replies 40% more than A.' };
    llm.script(
      () => ({
        body: completion(null, [
          { id: 'c1', name: 'create_card', args: claim },
          {
            id: 'c2',
            name: 'create_card',
            args: {
              ...claim,
              payload: {
                figures: [
                  { key: 'A', exposures: 120, outcomes: 6 },
                  { key: 'B', exposures: 118, outcomes: 14 },
                ],
              },
            },
          },
          { id: 'c3', name: 'create_card', args: { sourceType: 'insight', title: 'Try a shorter subject next week' } },
        ]),
      }),
      () => ({ body: completion('Done.') }),
    );
    await env.say(token, 'tell me what worked');
    expect(toolMessage(llm, 'c1')).toMatch(
      /^error: the card claims a result \("won"\) without the figures it rests on, so no card was made/,
    );
    expect(toolMessage(llm, 'c2')).toMatch(/^ok: card \S+ is waiting in the review queue$/);
    expect(toolMessage(llm, 'c3')).toMatch(/^ok: card \S+ is waiting in the review queue$/);
    const titles = (await rows(env, 'review_cards', { account_id: accountId })).map((c) => c.title).sort();
    expect(titles).toEqual(['Subject B won', 'Try a shorter subject next week']);
  });
});
