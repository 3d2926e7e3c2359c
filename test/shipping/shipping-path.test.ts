import { describe, expect } from 'vitest';
import { cardAutoResolve } from '../../src/jobs/card-timers.js';
import { enqueue } from '../../src/jobs/registry.js';
import { newId } from '../../src/ids.js';
import { connectProvider } from '../../src/channels/connections.js';
import { KINDS_OF_WORK } from '../../src/channels/kinds.js';
import { adapterFor, cannotShip, registerAdapter, shippingHere } from '../../src/channels/registry.js';
import { experimentAdapter } from '../../src/experiments/experiment.adapter.js';
import { setApproval, shipBySetting } from '../../src/review/approval.service.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { createCard } from '../helpers/cards.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { until } from '../helpers/processes.js';
import { buildCard } from '../review/factories.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

it.override('options', {
  env: { TRUST_AUTO_RESOLVE_AFTER: '2', TRUST_AUTO_RESOLVE_DELAY_MS: '200', CARD_SWEEP_MS: '600000' },
  pools: ['card-timers'],
});

/** Every kind an account cannot ship until an operator connects it, with its source type and the connection the 409 names. */
const UNCONNECTED = [
  {
    work: 'network_message',
    sourceType: 'network_message',
    says: 'network messages cannot ship: no professional-network connection on this account',
  },
  { work: 'ad_test', sourceType: 'ad_test', says: 'ad tests cannot ship: no ad-platform connection on this account' },
  { work: 'spend', sourceType: 'budget_change', says: 'spending cannot ship: no ad-platform billing connection on this account' },
] as const;

const workCard = (env: TestEnv, accountId: string, u: (typeof UNCONNECTED)[number]) =>
  buildCard(env.deps.db, accountId, 'approval', {
    sourceType: u.sourceType,
    title: `Ship some ${u.work}`,
    payload: { work: u.work, draft: { body: 'Hello' } },
    ...(u.work === 'spend' ? { budgetChange: { amount: 100 } } : {}),
  });

describe('the channel registry', () => {
  it('connects email and sequences (mail on the same transport) and blog posts (our Content API) on every account', async ({ env }) => {
    const { accountId } = await env.tenant();
    const here = await shippingHere(env.deps.db, accountId);
    expect(here.ships).toEqual(['email', 'sequence', 'blog_post', 'experiment']);
    expect(here.waits.map((w) => w.kind)).toEqual(KINDS_OF_WORK.filter((k) => !here.ships.includes(k)));
    expect(await cannotShip(env.deps.db, accountId, 'blog_post')).toBeNull();
    expect(await cannotShip(env.deps.db, accountId, 'email')).toBeNull();
    expect(await cannotShip(env.deps.db, accountId, 'sequence')).toBeNull();
  });

  it('connects network messages on an account with a network connection (admin `channel connect`), and only there', async ({ env }) => {
    const { accountId } = await env.tenant();
    const other = await env.tenant();
    await connectProvider(
      env.deps.db,
      env.config.sealing,
      { accountId, kind: 'network', transport: 'http', url: 'http://127.0.0.1:9', key: 'k' },
      Date.now(),
    );
    expect((await shippingHere(env.deps.db, accountId)).ships).toEqual(['email', 'sequence', 'network_message', 'blog_post', 'experiment']);
    expect((await shippingHere(env.deps.db, other.accountId)).ships).toEqual(['email', 'sequence', 'blog_post', 'experiment']);
  });

  it('ships experiments through the adapter the composition roots register, and keeps the one it was first given', ({ env }) => {
    // setupTestEnv registered it as createApp and createWorker do; registering it again changes nothing.
    registerAdapter('experiment', experimentAdapter);
    expect(adapterFor(env.config, env.deps.db, 'experiment')?.kind).toBe('experiment');
    expect(() => registerAdapter('experiment', (config, db) => experimentAdapter(config, db))).toThrow(
      'the experiment adapter is already registered',
    );
    expect(adapterFor(env.config, env.deps.db, 'experiment')?.service).toBe('the experiment runner');
  });
});

describe('approving work whose adapter is not connected', () => {
  for (const u of UNCONNECTED) {
    it(`answers 409 rejected naming the missing connection for ${u.work}; the card stays pending`, async ({ env }) => {
      const { token, accountId } = await env.tenant();
      const card = await workCard(env, accountId, u);
      const res = await approveCard(env, token, card.id);
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ error: 'rejected', message: u.says });
      const item = (await env.api().get(`/api/v1/review/${card.id}`).set(auth(token))).body.item;
      expect(item).toMatchObject({ status: 'pending', resolvedAt: null, resolution: null });
      expect(item.actions).toContain('approve');
      expect(await rows(env, 'shipments', { card_id: card.id })).toEqual([]);
    });
  }
});

describe('the trust ladder and the run-without-approval setting', () => {
  it('gives an unconnected kind no deadline, however trusted or freed', async ({ env }) => {
    const { accountId } = await env.tenant();
    for (let i = 0; i < 3; i++) await raiseTrust(env.deps.db, accountId, 'network_message');
    const base = await workCard(env, accountId, UNCONNECTED[0]);
    const laddered = await createCard(env.deps, { ...base, id: newId('card'), ladderChecked: false, actions: [], primaryLabel: '' });
    expect(laddered.autoResolveAt).toBeNull();

    await setApproval(env.deps.db, accountId, 'ad_test', false);
    const freed = await shipBySetting(
      env.deps.db,
      {
        id: newId('card'),
        accountId,
        kind: 'approval',
        sourceType: 'ad_test',
        title: 'An ad test',
        payload: { work: 'ad_test' },
        actions: [],
        primaryLabel: '',
      },
      env.deps.readTurn,
    );
    expect(freed).toMatchObject({ status: 'pending', autoResolveAt: null });
    expect((freed.detail as { note: string }).note).toBe(
      'Not shipped automatically: ad tests cannot ship: no ad-platform connection on this account; it waits for a person',
    );
  });

  it('leaves a note instead of resolving when a deadline reaches an unconnected kind', async ({ env }) => {
    const { accountId } = await env.tenant();
    const at = Date.now() + 100;
    const card = await workCard(env, accountId, UNCONNECTED.find((u) => u.work === 'ad_test')!);
    await cardsRepository(env.deps.db).transition(accountId, card.id, { statuses: ['pending'] }, { autoResolveAt: at });
    await enqueue(env.deps.queues, cardAutoResolve, { accountId, cardId: card.id, at }, { delay: 100 });
    const noted = await until(async () => {
      const c = await cardsRepository(env.deps.db).find(accountId, card.id);
      return c && c.autoResolveAt === null ? c : null;
    }, 20_000);
    expect(noted).toMatchObject({ status: 'pending', resolvedAt: null });
    expect((noted.detail as { note: string }).note).toBe(
      'Not shipped automatically: ad tests cannot ship: no ad-platform connection on this account; it waits for a person',
    );
    expect(await autoResolve(env.deps, accountId, card.id, at)).toBe('noop');
  });

  it('still resolves cards that are not work (a question with a deadline)', async ({ env }) => {
    const { accountId } = await env.tenant();
    const at = Date.now();
    const card = await buildCard(env.deps.db, accountId, 'question', { autoResolveAt: at });
    expect(await autoResolve(env.deps, accountId, card.id, at)).toBe('resolved');
  });
});
