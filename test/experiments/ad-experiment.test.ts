import { agentDoors } from '../../workers/agent-turns.js';
import { describe, expect } from 'vitest';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { draftExperimentMail, lookAtExperiment } from '../../src/experiments/experiments.service.js';
import { executeTool } from '../../src/agent/tools/tool.js';
import { setSpendCap } from '../../src/channels/spend-cap.js';
import { adTestCardId } from '../../src/experiments/variants/ad.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { pollProviderEvents } from '../../src/inbound/network-replies.service.js';
import { setApproval } from '../../src/review/approval.service.js';
import { sweepCards } from '../../src/shipping/after-approval.js';
import type { TestEnv } from '../helpers/fixture.js';
import { connectedTenant, withBridge, type ProviderBridgeStandIn } from '../helpers/provider-bridge.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { auth } from '../helpers/auth.js';
import { rows, sendOfCard } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

const it = withBridge();

// An experiment on an ad, in-process against the local ad-platform bridge (a real HTTP server on loopback): proposed
// through the agent's tool, started by approving its card (which files ONE ad_test card), the ad test shipped to the
// bridge by approving that card, the platform's per-variant metrics polled back through pollProvider, looked at on the
// plan's schedule, the winner adopted, and a later ad test the agent ships starting from it.

const ADS = [
  { headline: 'Onboarding in a day', body: 'Cut onboarding to one day.', url: 'https://acme.test/a' },
  { headline: 'Still onboarding by hand?', body: 'Let the agent do it.' },
];
/** 5% against 10% clicks: a plan of 1,296 impressions per variant (810 widened by the design effect 1.6), the first look at 500. */
const PROPOSE = {
  thing: 'ad_variant',
  topic: 'onboarding',
  ads: ADS,
  metric: 'click_rate',
  budgetCap: 20_000,
  currency: 'USD',
  durationDays: 14,
  baselineRate: 0.05,
  minimumDetectableEffect: 0.05,
};

const toolEnv = (env: TestEnv, accountId: string) => ({
  db: env.deps.db,
  accountId,
  turnId: 'turn_ad_experiment',
  fromOutside: false,
  config: env.config,
  onReply: async () => undefined,
  doors: agentDoors,
});
const tool = (env: TestEnv, accountId: string, name: string, args: Record<string, unknown>) =>
  executeTool({ id: 'c1', name, args }, toolEnv(env, accountId));

/** An account connected to the bridge for ads, with a monthly spend cap of 1,000.00 USD. */
async function adsAccount(bridge: ProviderBridgeStandIn, env: TestEnv) {
  const t = await connectedTenant(env, bridge, 'ads');
  await setSpendCap(env.deps.db, t.accountId, '100000', 'USD', Date.now());
  return t;
}

async function approve(env: TestEnv, token: string, cardId: string) {
  const res = await approveCard(env, token, cardId);
  expect(res.status).toBe(200);
  await runFollowUps(env.deps);
}

const cards = (env: TestEnv, accountId: string, sourceType: string) =>
  rows(env, 'review_cards', { account_id: accountId, source_type: sourceType }).orderBy('created_at');

/** Proposes PROPOSE (with `args` over it) through the tool, approves the experiment's card, and answers its id. */
async function started(env: TestEnv, accountId: string, token: string, args: Record<string, unknown> = {}) {
  const out = await tool(env, accountId, 'propose_experiment', { ...PROPOSE, ...args });
  expect(out).toMatchObject({ ok: true });
  const id = /experiment (exp_\S+)/.exec(out.result)![1]!;
  const cardId = /card (card_\S+?);/.exec(out.result)![1]!;
  await approve(env, token, cardId);
  return id;
}

/** The ad platform reports `n` more impressions with `clicks` for each variant label of `testId`. */
function report(bridge: ProviderBridgeStandIn, testId: string, counts: Record<string, [number, number]>) {
  for (const [variant, [impressions, clicks]] of Object.entries(counts)) {
    const id = `m${bridge.events.length + 1}`;
    bridge.events.push({
      id,
      type: 'ad_metrics',
      at: Date.now() - 1_000,
      data: { testId, variant, impressions, clicks, spend: impressions, conversions: 0 },
    });
  }
}

describe('an experiment on an ad', () => {
  it('files one ad test on approval, reads the polled metrics on schedule, and a later ad test starts from the winner', async ({
    bridge,
    env,
  }) => {
    bridge.events.length = 0;
    const { accountId, token } = await adsAccount(bridge, env);
    const proposed = await tool(env, accountId, 'propose_experiment', PROPOSE);
    expect(proposed).toMatchObject({ ok: true });
    expect(proposed.result).toMatch(/^experiment exp_\S+ is waiting for review as card card_\S+; nothing starts until it is approved$/);
    const [card] = await cards(env, accountId, 'experiment');
    expect(card.prompt).toContain('Planned sample: 1,296 impressions per variant');
    // Impressions are not people: the card says so and states the clustering it assumes.
    expect(card.prompt).toContain('so this test is not randomised per person');
    expect(card.prompt).toContain('assumed correlation 0.2');
    expect(card.prompt).toContain('Metric: click rate (clicks per impression in the experiment).');
    expect(card.prompt).toContain('the platform, not this service, picks each one’s ad');
    expect(card.prompt).toContain('one ad test of these ads (budget cap 200.00 USD, 14 days), which waits under your ad test approval');
    const id = /experiment (exp_\S+)/.exec(proposed.result)![1]!;
    const repo = experimentsRepository(env.deps.db);
    expect(await repo.get(accountId, id)).toMatchObject({ status: 'proposed', thing: 'ad_variant', audience: [] });

    // Approving the experiment starts it and files ONE ad_test card; it waits under the ad approval settings, unshipped.
    const posts = bridge.posts.length;
    await approve(env, token, card.id);
    const e = (await repo.get(accountId, id))!;
    expect(e.status).toBe('running');
    expect(await cards(env, accountId, 'ad_test')).toHaveLength(1);
    // The maintenance pass's drafting step (run twice at once) files no other.
    await Promise.all([draftExperimentMail(env.deps.db, e, 10), draftExperimentMail(env.deps.db, e, 10)]);
    const adCards = await cards(env, accountId, 'ad_test');
    expect(adCards).toHaveLength(1);
    const adCard = adCards[0];
    expect(adCard).toMatchObject({ id: adTestCardId(accountId, id), status: 'pending' });
    expect(adCard.payload).toMatchObject({ experimentId: id, variants: ADS, budgetCap: 20_000, currency: 'USD', durationDays: 14 });
    expect(adCard.prompt).toContain('Review before it ships: nothing is spent until it does.');
    expect(bridge.posts.length).toBe(posts);
    expect(await lookAtExperiment(env.deps.db, e, Date.now(), 0)).toBe('collecting');

    // Approved, the ad test ships once to the platform with the experiment's ads in plan order (A first).
    await approve(env, token, adCard.id);
    const fence = await sendOfCard(env, adCard.id);
    expect(fence).toMatchObject({ status: 'sent', kind_of_work: 'ad_test' });
    const shipped = bridge.posts.filter((p) => p.key === fence.idempotency_key);
    expect(shipped.map((p) => p.body.details.variants)).toEqual([ADS]);
    const testId = fence.provider_id as string;

    // Under the first look's 500 impressions per variant: no look. Another test's metrics never count.
    report(bridge, testId, { A: [300, 15], B: [300, 45] });
    report(bridge, 'another-test', { A: [5_000, 0], B: [5_000, 4_000] });
    await pollProviderEvents(env.deps, accountId, 'ads');
    expect(await lookAtExperiment(env.deps.db, e, Date.now(), 0)).toBe('collecting');
    expect((await repo.counts(e, Date.now())).counts).toEqual([
      { exposures: 300, outcomes: 15 },
      { exposures: 300, outcomes: 45 },
    ]);
    expect((await repo.get(accountId, id))!.looks).toEqual([]);

    // Past it: the look decides B and files the winner card with its figures.
    report(bridge, testId, { A: [300, 15], B: [300, 45], Z: [900, 900] });
    await pollProviderEvents(env.deps, accountId, 'ads');
    expect(await lookAtExperiment(env.deps.db, (await repo.get(accountId, id))!, Date.now(), 0)).toBe('winner');
    const decided = (await repo.get(accountId, id))!;
    expect(decided).toMatchObject({ status: 'decided', winnerKey: 'B' });
    const [winner] = await cards(env, accountId, 'experiment_winner');
    expect(winner.title).toBe('Use B as the ad for "onboarding"');
    expect(winner.summary).toMatch(
      /^clicks 30\/600 \(5%\) vs 90\/600 \(15%\), winner B: B − A \+10 points \(\+200%\), 97% interval \+[\d.]+ to \+[\d.]+ points .*/,
    );
    expect(winner.summary).toMatch(/, intervals widened for impressions clustered by person, 600 of 1,296 planned/);
    expect(winner.summary).toMatch(/^clicks/);
    expect(winner.prompt).toContain('the default ad later ad tests about onboarding start from');
    expect(winner.prompt).toContain('The ad test itself runs on until its budget cap or duration ends');
    expect(winner.payload.figures.map((f: { exposures: number; outcomes: number }) => [f.exposures, f.outcomes])).toEqual([
      [600, 30],
      [600, 90],
    ]);

    // /results experiments shows it as decided, impressions as exposures.
    const res = await env.api().get('/api/v1/results').set(auth(token));
    expect(res.status).toBe(200);
    const [shown] = ResultsResponse.parse(res.body).results.experiments;
    expect(shown).toMatchObject({ id, thing: 'ad_variant', status: 'decided', decision: { state: 'winner', winner: 'B' } });
    expect(shown!.variants.map((v) => [v.description, v.exposures, v.outcomes, v.sent])).toEqual([
      ['"Onboarding in a day": Cut onboarding to one day.', 600, 30, 600],
      ['"Still onboarding by hand?": Let the agent do it.', 600, 90, 600],
    ]);

    // Adopted, a later ad test the agent ships about the topic starts from B, and the card says so.
    await approve(env, token, winner.id);
    expect((await repo.get(accountId, id))!.adoptedAt).not.toBeNull();
    const later = await tool(env, accountId, 'ship', {
      work: 'ad_test',
      title: 'Spring onboarding ads',
      details: {
        topic: 'Onboarding',
        variants: [{ headline: 'Spring onboarding', body: 'Start this week.' }],
        budgetCap: 5_000,
        currency: 'USD',
        durationDays: 7,
      },
    });
    expect(later).toMatchObject({ ok: true });
    expect(later.result).toContain('it starts from the default ad an experiment decided for "Onboarding"');
    const next = (await cards(env, accountId, 'ad_test')).find((c) => c.id !== adCard.id);
    expect(next.payload.variants).toEqual([ADS[1], { headline: 'Spring onboarding', body: 'Start this week.' }]);
    expect(next.payload.defaultAd).toBe(
      'Variant 1 is the default ad an experiment decided for "Onboarding": "Still onboarding by hand?": Let the agent do it.',
    );
  });

  it('says when nothing won and stops; an ad test freed by the account setting ships by the setting, not by hand', async ({
    bridge,
    env,
  }) => {
    bridge.events.length = 0;
    const { accountId, token } = await adsAccount(bridge, env);
    await setApproval(env.deps.db, accountId, 'ad_test', false);
    const id = await started(env, accountId, token, { metric: 'conversion_rate' });
    const [adCard] = await cards(env, accountId, 'ad_test');
    // The setting frees it: the card-timers sweep ships it through the fenced path, decided by `setting`.
    expect(adCard).toMatchObject({ status: 'pending', kind_of_work: 'ad_test' });
    expect(adCard.auto_resolve_at).not.toBeNull();
    expect(adCard.detail.autoResolve).toMatchObject({ by: 'setting' });
    await sweepCards(env.deps);
    const fence = await sendOfCard(env, adCard.id);
    expect(fence).toMatchObject({ status: 'sent', kind_of_work: 'ad_test' });
    const launched = await rows(env, 'channel_events', { account_id: accountId, channel: 'ads', type: 'test_launched' });
    expect(launched.map((l) => l.decided_by)).toEqual(['setting']);
    // Conversions, not clicks, are the outcome; equal rates up to the planned sample: no winner.
    for (const at of [700, 600]) {
      bridge.events.push(
        ...['A', 'B'].map((variant, i) => ({
          id: `c${bridge.events.length + i + 1}`,
          type: 'ad_metrics',
          at: Date.now() - 1_000,
          data: { testId: fence.provider_id, variant, impressions: at, clicks: at, conversions: at / 20, spend: 100 },
        })),
      );
    }
    await pollProviderEvents(env.deps, accountId, 'ads');
    const repo = experimentsRepository(env.deps.db);
    expect(await lookAtExperiment(env.deps.db, (await repo.get(accountId, id))!, Date.now(), 0)).toBe('no_difference');
    expect(await repo.get(accountId, id)).toMatchObject({ status: 'no_winner', winnerKey: null });
    const [none] = await cards(env, accountId, 'experiment_no_winner');
    expect(none.title).toBe('No winner: the ad for "onboarding"');
    expect(none.summary).toMatch(/^conversions 65\/1,300 \(5%\) vs 65\/1,300 \(5%\), no winner/);
    expect(none.prompt).toContain('No ad did better than chance allows, so the experiment stopped');
  });

  it('ends with no winner when its ad test card is dismissed, nothing spent', async ({ bridge, env }) => {
    const { accountId, token } = await adsAccount(bridge, env);
    const id = await started(env, accountId, token);
    const [adCard] = await cards(env, accountId, 'ad_test');
    const res = await env.api().post(`/api/v1/review/${adCard.id}/dismiss`).set(auth(token)).send({});
    expect(res.status).toBe(200);
    await runFollowUps(env.deps);
    const repo = experimentsRepository(env.deps.db);
    expect(await lookAtExperiment(env.deps.db, (await repo.get(accountId, id))!, Date.now(), 0)).toBe('stopped');
    expect(await repo.get(accountId, id)).toMatchObject({ status: 'no_winner' });
    expect(await rows(env, 'shipments', { card_id: adCard.id })).toEqual([]);
    expect(await cards(env, accountId, 'experiment_no_winner')).toHaveLength(1);
  });

  it('refuses without an ads connection, a reply metric, a bad budget or one over the spend cap, writing nothing', async ({
    bridge,
    env,
  }) => {
    const { accountId } = await adsAccount(bridge, env);
    const unconnected = await env.tenant();
    const cases: [string, Record<string, unknown>, string][] = [
      [
        unconnected.accountId,
        {},
        'an ad experiment runs as an ad test, and ad tests cannot ship: no ad-platform connection on this account',
      ],
      [accountId, { metric: 'reply_rate' }, 'an ad cannot be measured by its reply rate: the ad platform reports impressions, clicks'],
      [accountId, { metric: 'positive_reply_rate' }, 'an ad cannot be measured by its positive-reply rate'],
      [accountId, { budgetCap: 0 }, 'budgetCap must be a whole number of minor currency units (cents) above 0'],
      [accountId, { budgetCap: 12.5 }, 'budgetCap must be a whole number of minor currency units (cents) above 0'],
      [accountId, { currency: 'usd' }, 'currency must be a three-letter ISO 4217 code'],
      [accountId, { durationDays: 0 }, 'durationDays must be a whole number from 1 to 90'],
      [accountId, { currency: 'EUR' }, 'the budget is in EUR but the monthly spend cap is in USD'],
      [accountId, { budgetCap: 100_001 }, 'a budget cap of 1000.01 USD would pass the monthly spend cap: 1000.00 USD is left this month'],
      [accountId, { ads: [ADS[0], ADS[0]] }, 'the ads must differ from each other'],
      [accountId, { ads: [ADS[0], { headline: 'x', body: 'y', url: 'ftp://x' }] }, "variant 2's url must be an http(s) URL"],
      [accountId, { ads: undefined }, 'an ad experiment has 2 to 4 ads'],
    ];
    const capless = await connectedTenant(env, bridge, 'ads');
    cases.push([capless.accountId, {}, 'no monthly spend cap is set on this account; the operator sets one (channel spend-cap)']);
    for (const [account, args, why] of cases) {
      const out = await tool(env, account, 'propose_experiment', { ...PROPOSE, ...args });
      expect(out.ok).toBe(false);
      expect(out.result).toContain(`no experiment was proposed: ${why}`);
    }
    // A mail experiment still needs its draft, and challengers.
    const mail = await tool(env, accountId, 'propose_experiment', { thing: 'mail_subject', topic: 'onboarding', ads: ADS });
    expect(mail).toMatchObject({ ok: false, result: 'no experiment was proposed: a mail experiment needs subject and body' });
    const bare = await tool(env, accountId, 'propose_experiment', {
      thing: 'mail_subject',
      topic: 'onboarding',
      subject: 'Hi',
      body: 'Hello',
    });
    expect(bare).toMatchObject({ ok: false, result: 'no experiment was proposed: name 1 to 3 challengers' });
    // Five ads do not fit the tool's schema (2 to 4).
    const five = await tool(env, accountId, 'propose_experiment', {
      ...PROPOSE,
      ads: [1, 2, 3, 4, 5].map((n) => ({ headline: `${n}`, body: 'b' })),
    });
    expect(five).toMatchObject({ ok: false, result: expect.stringMatching(/^bad arguments: ads /) });
    for (const account of [accountId, unconnected.accountId, capless.accountId]) {
      expect(await rows(env, 'experiments', { account_id: account })).toEqual([]);
      expect(await rows(env, 'review_cards', { account_id: account })).toEqual([]);
    }
  });
});
