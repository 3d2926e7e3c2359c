import { spawn, type ChildProcess } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { buildCard } from '../helpers/factories.js';
import { afterAll, describe, expect } from 'vitest';
import { newId } from '../../src/ids.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { raiseTrust } from '../../src/review/trust.service.js';
import { envFor } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { ROOT, waitFor } from '../helpers/processes.js';
import { waitQueuesIdle } from '../helpers/queues-idle.js';

// Real worker processes (`bin/start.ts workers --pools card-timers,shipments`) sharing this file's database and prefix.
const MAIL_DIR = `/tmp/gas-review-proc-${process.pid}-${Date.now()}`;
const SHARED = {
  TRUST_AUTO_RESOLVE_AFTER: '2',
  TRUST_AUTO_RESOLVE_DELAY_MS: '400',
  CARD_SWEEP_MS: '200',
  MAIL_SWEEP_MS: '300',
  MAIL_TRANSPORT: 'local',
  MAIL_LOCAL_DIR: MAIL_DIR,
};
let child: ChildProcess | null = null;
it.override('options', { env: SHARED });
it.beforeAll(async ({ env }) => {
  const queue = env.deps.queues.get('card-timers')!;
  const { BASE_URL: _vite, ...inherited } = process.env;
  child = spawn(process.execPath, ['--import', 'tsx', 'bin/start.ts', 'workers', '--pools', 'card-timers,shipments'], {
    cwd: ROOT,
    env: { ...inherited, ...envFor(env.config), ...SHARED },
    stdio: 'ignore',
  });
  await waitFor(async () => (await queue.getWorkers()).length > 0, 'card-timers worker start', 40_000);
}, 60_000);
afterAll(async () => {
  if (child && child.exitCode === null) {
    const exited = new Promise((r) => child!.on('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
});

describe('card-timers and shipments in a worker process', () => {
  it('applies the ladder to a card the agent inserted, then sends it at its deadline, exactly once', async ({ env }) => {
    const { accountId } = await env.tenant();
    await raiseTrust(env.deps.db, accountId, 'email');
    await raiseTrust(env.deps.db, accountId, 'email');
    // Inserted the way the agent's tools do: straight through the repository, ladder not applied yet.
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      title: 'Intro',
      payload: { work: 'email', to: 'proc@initech.test', draft: { subject: 'proc-mail', body: 'hi' } },
      ladderChecked: false,
    });
    expect(card.autoResolveAt).toBeNull();
    let seenDeadline: number | null = null;
    await waitFor(
      async () => {
        const c = await cardsRepository(env.deps.db).find(accountId, card.id);
        if (c?.autoResolveAt) seenDeadline = c.autoResolveAt;
        return c?.status === 'sent';
      },
      'card sent by the ladder',
      20_000,
    );
    expect(seenDeadline).not.toBeNull();
    // Counted once nothing is left queued and both sweeps ran twice more: a second send would be among the files.
    await waitQueuesIdle(env, ['card-timers', 'shipments']);
    const sent = await cardsRepository(env.deps.db).find(accountId, card.id);
    expect(sent?.resolution).toMatchObject({ action: 'send', by: 'trust_ladder' });
    const files = (await readdir(MAIL_DIR)).filter((f) => f.endsWith('.eml'));
    expect(files).toHaveLength(1);
  }, 30_000);

  it('wakes a snoozed card whose job was never queued, through the sweep', async ({ env }) => {
    const { accountId } = await env.tenant();
    const card = await cardsRepository(env.deps.db).insert({
      id: newId('card'),
      accountId,
      kind: 'question',
      sourceType: 'agent_question',
      title: 'Q',
      payload: {},
      actions: [],
      primaryLabel: '',
      status: 'snoozed',
      snoozedUntil: Date.now() + 100,
      ladderChecked: true,
    });
    await waitFor(async () => (await cardsRepository(env.deps.db).find(accountId, card.id))?.status === 'pending', 'card woken', 15_000);
  }, 20_000);
});
