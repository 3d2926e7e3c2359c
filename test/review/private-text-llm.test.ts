import { describe, expect } from 'vitest';
import { memoryNotesRepository } from '../../src/memory/memory-notes.repository.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { completion, llmEnv } from '../helpers/fake-llm.js';
import { rows } from '../helpers/rows.js';

// The llm brain sees the account memory in its prompt; a draft that quotes it is refused back to the
// model with the reason, and no card is made.
const NOTE = 'our best customers are freight brokers with 50-200 staff';

it.override('options', ({ llm }) => agentOptions(llmEnv(llm)));
it.beforeEach(({ llm }) => {
  llm.requests.length = 0;
});

const cardsOf = (env: AgentEnv, accountId: string) => rows(env, 'review_cards', { account_id: accountId });

describe('an llm-brain draft that quotes account memory', () => {
  it.for<[string, Record<string, unknown>]>([
    [
      'ship',
      {
        work: 'email',
        title: 'Intro to Kim',
        to: 'kim@haulers.test',
        subject: 'Quoting',
        body: `Hi Kim, ${NOTE.toUpperCase()}, so we built this for you.`,
      },
    ],
    [
      'create_card',
      {
        sourceType: 'mail_draft',
        title: 'Intro to Kim',
        payload: { to: 'kim@haulers.test', draft: { subject: 'Quoting', body: `Hi Kim,\n${NOTE}.` } },
      },
    ],
    [
      'ship',
      { work: 'network_message', title: 'Note to Lee', to: 'https://www.linkedin.com/in/lee', details: { message: `Lee: ${NOTE}` } },
    ],
  ])('makes no card when the model calls %s, and tells the model why', async ([tool, args], { agent: env, llm }) => {
    const { token, accountId } = await env.tenant();
    await memoryNotesRepository(env.deps.db).remember(accountId, NOTE, null, Date.now());
    llm.script(
      () => ({ body: completion(null, [{ id: 'call_1', name: tool, args }]) }),
      () => ({ body: completion('I will rewrite it in my own words.') }),
    );
    const res = await env.send(token, { text: 'write to Kim about our quoting tool', waitSeconds: 10 });
    expect(res.status).toBe(200);
    expect(res.body.message).toMatchObject({ status: 'replied', replies: [{ text: 'I will rewrite it in my own words.' }] });
    expect(await cardsOf(env, accountId)).toEqual([]);
    expect(llm.requests).toHaveLength(2);
    expect(llm.requests[0]!.body.messages[0]!.content).toContain(NOTE);
    expect(llm.requests[1]!.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      tool_call_id: 'call_1',
      content: expect.stringMatching(
        new RegExp(
          String.raw`^error: the draft quotes the account's private notes \(".+"\), ` +
            'which guide the work but are never shown to outsiders, so no card was made',
        ),
      ),
    });
  });

  it('still makes the card when the draft only follows the note in its own words', async ({ agent: env, llm }) => {
    const { token, accountId } = await env.tenant();
    await memoryNotesRepository(env.deps.db).remember(accountId, NOTE, null, Date.now());
    llm.script(
      () => ({
        body: completion(null, [
          {
            id: 'call_1',
            name: 'ship',
            args: {
              work: 'email',
              title: 'Intro to Kim',
              to: 'kim@haulers.test',
              subject: 'Quoting for brokerages',
              body: 'Hi Kim, teams like yours quote faster with us.',
            },
          },
        ]),
      }),
      () => ({ body: completion('Drafted; it is in your review queue.') }),
    );
    await env.send(token, { text: 'write to Kim', waitSeconds: 10 });
    expect((await cardsOf(env, accountId)).map((c) => [c.source_type, c.status])).toEqual([['mail_draft', 'pending']]);
  });
});
