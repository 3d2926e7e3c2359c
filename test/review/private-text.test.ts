import { describe, expect } from 'vitest';
import { memoryNotesRepository } from '../../src/memory/memory-notes.repository.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { dismissalLesson, findQuotedNote } from '../../src/review/cards/private-text.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { smtpEnv, type TestSmtp } from '../helpers/smtp-server.js';
import { buildCard } from '../helpers/factories.js';
import { auth } from '../helpers/auth.js';
import { rows } from '../helpers/rows.js';
import { approveCard } from '../helpers/approve.js';

// Notes guide the agent; they are never quoted to outsiders.
const NOTE = 'our best customers are freight brokers with 50-200 staff';

it.override('options', ({ smtp }) => agentOptions(smtpEnv(smtp)));

const remember = (env: AgentEnv, accountId: string, text: string) =>
  memoryNotesRepository(env.deps.db).remember(accountId, text, null, Date.now());
const deliveredTo = (smtp: TestSmtp, to: string) => smtp.received.filter((m) => m.to.includes(to)).length;

const say = (env: AgentEnv, token: string, text: string) => env.say(token, text);

describe('what counts as quoting a note', () => {
  it('finds eight consecutive words of a note whatever the case, spacing and punctuation', () => {
    const draft = 'Hi Jo,\n\nOur BEST customers are   freight brokers, with 50–200 staff (we hear).';
    expect(findQuotedNote([draft], [NOTE])).toBe('our best customers are freight brokers with');
    expect(findQuotedNote(['a b c d e f g h i j'], ['x a b c d e f g h y'])).toBe('a b c d e f g h');
  });

  it('finds a shorter run of at least 40 characters, and a whole note of four or more words', () => {
    const note = 'internationalisation considerations notwithstanding, procurement departments deliberate';
    expect(findQuotedNote(['Considerations notwithstanding, procurement moves slowly.'], [note])).toBe(
      'considerations notwithstanding procurement',
    );
    expect(findQuotedNote(['We never email on Fridays, as you know.'], ['we never email on Fridays'])).toBe('we never email on fridays');
  });

  it('leaves ordinary language alone: a short run of a long note, a note under four words, words split across fields', () => {
    expect(findQuotedNote(['our best customers are freight brokers'], [NOTE])).toBeNull();
    expect(findQuotedNote(['a b c d e f g'], ['x a b c d e f g h y'])).toBeNull();
    expect(findQuotedNote(['Short emails work best.'], ['short emails'])).toBeNull();
    expect(findQuotedNote(['our best customers are', 'freight brokers with 50-200 staff'], [NOTE])).toBeNull();
  });

  it("counts a dismissal lesson's reason as private, but not the dismissed card's own title", () => {
    const lesson = dismissalLesson(
      'Email to a@b.co: following up on the freight brokerage conference in Reno',
      'mail_draft',
      'he left the company last spring and moved to Denver',
    );
    expect(findQuotedNote(['Following up on the freight brokerage conference in Reno'], [lesson])).toBeNull();
    expect(findQuotedNote(['I heard he left the company last spring and moved to Denver'], [lesson])).toBe(
      'he left the company last spring and moved',
    );
  });
});

describe('the offline brain', () => {
  it('never puts memory text into a draft: after "remember …" the draft card holds none of it', async ({ agent: env }) => {
    const { token, accountId } = await env.tenant();
    await say(env, token, `remember that ${NOTE}`);
    expect((await rows(env, 'agent_memory', { account_id: accountId })).map((r) => r.text)).toEqual([NOTE]);
    const m = await say(env, token, 'draft an email to jo@haulers.test about a faster quoting tool');
    expect(m.replies.map((r) => r.text).join(' ')).toMatch(/review queue/);
    const [card] = await cardsRepository(env.deps.db).listWaiting(accountId, 10);
    expect(card).toMatchObject({ sourceType: 'mail_draft', payload: { to: 'jo@haulers.test' } });
    const text = JSON.stringify(card!.payload).toLowerCase() + card!.title.toLowerCase() + card!.summary.toLowerCase();
    for (const fragment of ['best customers', 'freight brokers', '50-200', 'notes in mind']) expect(text).not.toContain(fragment);
  });
});

describe('the shipping path', () => {
  it('refuses to send a mail card whose body quotes memory: 409 rejected, the card stays, nothing reaches the mail server', async ({
    agent: env,
    smtp,
  }) => {
    const { token, accountId } = await env.tenant();
    await remember(env, accountId, NOTE);
    const card = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: {
        work: 'email',
        to: 'kim@haulers.test',
        draft: { subject: 'A faster quoting tool', body: `Hi Kim,\n\nOur best customers are freight brokers with 50-200 staff.\n\nBest` },
      },
    });
    const res = await env.api().post(`/api/v1/review/${card.id}/send`).set(auth(token)).send({});
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: 'rejected',
      message: expect.stringMatching(/^this mail quotes the account's private notes \("our best customers are freight brokers with"\)/),
    });
    const after = await cardsRepository(env.deps.db).find(accountId, card.id);
    expect(after).toMatchObject({ status: 'pending', version: 1 });
    expect(after!.actions).toContain('send');
    expect(await rows(env, 'shipments', { card_id: card.id })).toEqual([]);
    expect(deliveredTo(smtp, 'kim@haulers.test')).toBe(0);
  });

  it('refuses to approve other shipping work that quotes memory, and sends a clean mail card as before', async ({ agent: env, smtp }) => {
    const { token, accountId } = await env.tenant();
    await remember(env, accountId, NOTE);
    const note = await buildCard(env.deps.db, accountId, 'approval', {
      payload: {
        work: 'network_message',
        to: 'https://www.linkedin.com/in/lee',
        draft: { body: `Lee, our best customers are freight brokers with 50-200 staff.` },
      },
    });
    const approve = await approveCard(env, token, note.id);
    expect(approve.status).toBe(409);
    expect(approve.body).toMatchObject({ error: 'rejected', message: expect.stringContaining("quotes the account's private notes") });
    expect((await cardsRepository(env.deps.db).find(accountId, note.id))?.status).toBe('pending');
    const clean = await buildCard(env.deps.db, accountId, 'mail_draft', {
      payload: { work: 'email', to: 'ok@haulers.test', draft: { subject: 'Quoting', body: 'Hi, a short note about quoting.' } },
    });
    expect((await env.api().post(`/api/v1/review/${clean.id}/send`).set(auth(token)).send({})).status).toBe(200);
    expect(deliveredTo(smtp, 'ok@haulers.test')).toBe(1);
  });

  it.for([
    [
      'mail_draft',
      {
        work: 'email',
        to: 'lu@haulers.test',
        draft: { subject: 'Our best customers are freight brokers with 50-200 staff', body: 'Hi Lu' },
      },
      /^Not sent automatically: this mail quotes the account's private notes/,
    ],
    [
      'approval',
      { work: 'network_message', to: 'https://www.linkedin.com/in/lu', draft: { body: `Lu, ${NOTE}.` } },
      /^Not approved automatically: this card quotes the account's private notes/,
    ],
  ] as const)(
    'leaves a trusted %s card that quotes memory to a person instead of shipping it at its deadline, saying why',
    async ([kind, payload, note], { agent: env, smtp }) => {
      const { accountId } = await env.tenant();
      await remember(env, accountId, NOTE);
      const at = Date.now();
      const card = await buildCard(env.deps.db, accountId, kind, { autoResolveAt: at, payload: { ...payload } });
      expect(await autoResolve(env.deps, accountId, card.id, at)).toBe('noop');
      const after = await cardsRepository(env.deps.db).find(accountId, card.id);
      expect(after).toMatchObject({ status: 'pending', autoResolveAt: null, resolution: null });
      expect((after!.detail as { note: string }).note).toMatch(note);
      expect(deliveredTo(smtp, 'lu@haulers.test')).toBe(0);
      expect(await rows(env, 'shipments', { card_id: card.id })).toEqual([]);
    },
  );
});
