import { describe, expect } from 'vitest';
import { draftExperimentMail, lookAtExperiment, proposeExperiment } from '../../src/experiments/experiments.service.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { buildLead } from '../helpers/factories.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// The experiment's own path, below the API: proposed with a plan and an audience, started by approving its card
// (the shipping path), every contact's variant recorded before any mail, each contact drafted once with its variant.

async function contacts(env: TestEnv, accountId: string, n: number) {
  for (let i = 0; i < n; i++) await buildLead(env.deps.db, accountId, { contacts: [{ email: `person${i}@co${i}.test` }] });
}

const draft = { subject: 'Onboarding in a day', body: 'Hi there,\n\nWe cut onboarding to one day.\n\nBest regards' };

/** A subject test about onboarding proposed to the account's contacts (the plan's defaults unless `plan` says). */
const propose = (env: TestEnv, accountId: string, plan: { baselineRate?: number; minimumDetectableEffect?: number } = {}) =>
  proposeExperiment(
    env.deps.db,
    { accountId, turnId: null, fromOutside: false },
    { thing: 'mail_subject', topic: 'onboarding', draft, challengers: ['Quick question about onboarding'], ...plan },
  );

describe('an experiment', () => {
  it('refuses a plan its audience cannot reach, and writes nothing', async ({ env }) => {
    const { accountId } = await env.tenant();
    await contacts(env, accountId, 30);
    const out = await propose(env, accountId);
    expect(out).toMatch(/^only 30 contacts could join; this plan needs at least \d+/);
    expect(await rows(env, 'experiments', { account_id: accountId })).toEqual([]);
    expect(await rows(env, 'review_cards', { account_id: accountId })).toEqual([]);
  });

  it('starts on approval, assigns every contact once, drafts each contact once with its variant', async ({ env }) => {
    const { accountId, token } = await env.tenant();
    await contacts(env, accountId, 240);
    const out = await propose(env, accountId, { baselineRate: 0.1, minimumDetectableEffect: 0.4 });
    if (typeof out === 'string') throw new Error(out);
    const card = await env.api().get(`/api/v1/review/${out.cardId}`).set(auth(token));
    expect(card.body.item).toMatchObject({ sourceType: 'experiment', status: 'pending' });
    expect(card.body.item.prompt).toContain('Stopping rule:');
    const approved = await approveCard(env, token, out.cardId);
    expect(approved.status).toBe(200);
    const repo = experimentsRepository(env.deps.db);
    const e = (await repo.get(accountId, out.id))!;
    expect(e.status).toBe('running');
    const assigned = await repo.assignments(accountId, out.id);
    expect(assigned.length).toBe(e.audience.length);
    expect(new Set(assigned.map((a) => a.contact)).size).toBe(assigned.length);
    expect(new Set(assigned.map((a) => a.variant_key))).toEqual(new Set(['A', 'B']));

    // Two drafters at once: every contact gets exactly one mail card, with its variant's subject.
    await Promise.all([draftExperimentMail(env.deps.db, e, 500), draftExperimentMail(env.deps.db, e, 500)].map((p) => p.catch(() => 0)));
    await draftExperimentMail(env.deps.db, e, 500);
    const mails = await rows(env, 'review_cards', { account_id: accountId, source_type: 'mail_draft' });
    expect(mails.length).toBe(assigned.length);
    const byContact = new Map((await repo.assignments(accountId, out.id)).map((a) => [a.contact, a]));
    for (const m of mails) {
      const a = byContact.get(m.payload.to)!;
      expect(a.card_id).toBe(m.id);
      expect(m.payload.draft.subject).toBe(a.variant_key === 'A' ? draft.subject : 'Quick question about onboarding');
    }
    // Nothing is exposed yet: a look decides nothing.
    expect(await lookAtExperiment(env.deps.db, e, Date.now(), 0)).toBe('collecting');
  });
});
