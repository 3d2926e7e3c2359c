import { describe, expect } from 'vitest';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { buildLead } from '../helpers/factories.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// The offline brain's experiment phrases, end to end through the API: a message in, the agent's reply out, the card
// in the review queue (or, truthfully, why there is none).

it.override('options', agentOptions());

/** `n` contacts never mailed, in leads of up to 100 written side by side (each lead its own domain). */
async function contacts(env: AgentEnv, accountId: string, n: number) {
  const leads = Array.from({ length: Math.ceil(n / 100) }, (_, l) => Math.min(100, n - l * 100));
  await Promise.all(
    leads.map((size, l) =>
      buildLead(env.deps.db, accountId, { contacts: Array.from({ length: size }, (_, i) => ({ email: `c${l}-${i}@co${l}.test` })) }),
    ),
  );
}

/** Tells the agent `text` and waits for its replies (the first turn of a file on a loaded machine may take a while). */
async function say(env: AgentEnv, token: string, text: string) {
  const res = await env.send(token, { text, waitSeconds: 10 });
  expect(res.status).toBeLessThan(300);
  return env.until(token, res.body.requestId, (m) => m.status === 'replied', 60_000);
}

describe('offline brain experiment phrases', () => {
  it('says truthfully that no experiment was proposed when too few contacts could join, and that none is running', async ({
    agent: env,
  }) => {
    const { token, accountId } = await env.tenant();
    await contacts(env, accountId, 3);
    const m = await say(env, token, 'test two subject lines for onboarding');
    expect(m.replies.map((r) => r.text)).toEqual([
      expect.stringMatching(
        new RegExp(
          '^I proposed no experiment: only 3 contacts could join; this plan needs at least \\d+ ' +
            '\\(\\d+ per variant, and room for an uneven split\\)\\.$',
        ),
      ),
    ]);
    expect(await rows(env, 'review_cards', { account_id: accountId })).toEqual([]);
    const how = await say(env, token, 'how are the experiments doing?');
    expect(how.replies.map((r) => r.text)).toEqual([
      'No experiment is running or waiting for approval, and none ended in the last 24 hours.',
    ]);
  });

  it('proposes a subject test as an experiment card and reports it from its results', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    await contacts(env, accountId, 900);
    const m = await say(env, token, 'test two subject lines for onboarding.');
    const [card] = await rows(env, 'review_cards', { account_id: accountId });
    expect(card).toMatchObject({ source_type: 'experiment', status: 'pending' });
    expect(m.replies.map((r) => r.text)).toEqual([
      'I proposed an experiment on the subject line of mail about onboarding: A "Onboarding" against B "Quick question about ' +
        `onboarding". It is waiting in your review queue as card ${card.id}; nothing is sent until you approve it.`,
    ]);
    // The same draft "draft an email … about onboarding" makes: its subject is A, its body every variant's body.
    const [e] = await rows(env, 'experiments', { account_id: accountId });
    expect(e.draft).toEqual({
      subject: 'Onboarding',
      body: 'Hi There,\n\nI wanted to reach out about onboarding.\n\nWould you be open to a short call next week?\n\nBest regards',
    });
    expect(e.plan.variants.map((v: { value: string }) => v.value)).toEqual(['Onboarding', 'Quick question about onboarding']);

    const how = await say(env, token, 'how is the subject test doing');
    expect(how.replies.map((r) => r.text)).toEqual([
      '1 experiment:\n- mail subject test for "onboarding" (reply rate): proposed, waiting for approval',
    ]);

    // Approved, it runs; the reply cites its figures so far.
    const approved = await approveCard(env, token, card.id);
    expect(approved.status).toBe(200);
    const running = await say(env, token, 'how is the subject test doing');
    expect(running.replies.map((r) => r.text)).toEqual([
      '1 experiment:\n- mail subject test for "onboarding" (reply rate): running, collecting; replies 0/0 (none yet) vs 0/0 (none yet), ' +
        'not decided: B − A +0 points, 97% interval anything yet, valid at any look; no winner can be read from it before the rule ' +
        'decides, 0 of 3,602 planned per variant',
    ]);
  });

  it('drafts from an adopted default and says which it used', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    // An experiment on "onboarding" decided B and a person approved it (the winner path is in experiment-llm.test.ts).
    const repo = experimentsRepository(env.deps.db);
    const draft = { subject: 'Onboarding', body: 'Hi there,\n\nAbout onboarding.' };
    await repo.insert({
      accountId,
      id: 'exp_adopted',
      cardId: null,
      thing: 'mail_subject',
      topic: 'onboarding',
      plan: {} as never,
      draft,
      audience: [],
      createdAt: Date.now(),
    });
    await repo.adopt(accountId, 'mail_subject', 'onboarding', 'Quick question about onboarding', 'exp_adopted', Date.now());
    const m = await say(env, token, 'draft an email to jane.doe@example.com about onboarding');
    expect(m.replies.map((r) => r.text)).toEqual([
      'I drafted an email to jane.doe@example.com about onboarding; it uses the default an experiment decided for "Onboarding": ' +
        'the subject line "Quick question about onboarding". It is waiting in your review queue; nothing is sent until you approve it.',
    ]);
    const [card] = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
    expect(card.payload.draft.subject).toBe('Quick question about onboarding');
    expect(card.title).toBe('Email to jane.doe@example.com: Quick question about onboarding');
  });
});
