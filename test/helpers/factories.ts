import { recordTurn, type Recorded, type TurnInput } from '../../src/agent/messages/agent.service.js';
import type { Config } from '../../src/config.js';
import type { Db, Queryable } from '../../src/db.js';
import { newId } from '../../src/ids.js';
import { upsertLead } from '../../src/leads/leads.service.js';
import type { UpsertLeadInput } from '../../src/leads/leads.types.js';
import { hashReplyToken, threadsRepository, type Thread } from '../../src/mail/threads.repository.js';
import { cardsRepository, type Card, type NewCard } from '../../src/review/cards/cards.repository.js';
import type { Deps } from '../../src/deps.js';
import { createHook } from '../../src/webhooks/webhooks.service.js';

// Test rows are made through the project's own services and repositories (never raw SQL), so a factory
// row is one the service could have written. Defaults are plain; every field can be overridden.

type Kind = 'approval' | 'plain' | 'question' | 'choice' | 'mail_draft' | 'mail_reply' | 'budget' | 'outbound_setup';

const BASE: Record<Kind, Omit<NewCard, 'id' | 'accountId' | 'actions' | 'primaryLabel'>> = {
  approval: {
    kind: 'approval',
    sourceType: 'network_message',
    title: 'Connect with Dana at Northwind',
    payload: { work: 'network_message', to: 'https://www.linkedin.com/in/dana', draft: { body: 'Hi Dana' } },
  },
  // An approval that ships nothing itself (no kind of work): approving it resolves it.
  plain: { kind: 'approval', sourceType: 'agent_approval', title: 'Go ahead with the Midwest list?', payload: {} },
  question: {
    kind: 'question',
    sourceType: 'agent_question',
    title: 'Which region first?',
    prompt: 'Where should outbound start?',
    payload: {},
    textInput: { label: 'Your answer', required: true, maxBytes: 8000 },
  },
  choice: { kind: 'choice', sourceType: 'agent_choice', title: 'Pick a subject line', payload: {}, options: ['A', 'B', 'C'] },
  mail_draft: {
    kind: 'approval',
    sourceType: 'mail_draft',
    title: 'Intro to Acme',
    payload: { work: 'email', to: 'jane@acme.test', draft: { subject: 'Quick idea for Acme', body: 'Hi Jane,\n\nA short note.' } },
  },
  mail_reply: {
    kind: 'approval',
    sourceType: 'mail_reply',
    title: 'Reply to Bo',
    payload: { work: 'email', to: 'bo@globex.test', inReplyTo: '<abc@globex.test>', draft: { subject: 'Re: pricing', body: 'Thanks Bo' } },
  },
  budget: {
    kind: 'approval',
    sourceType: 'budget_change',
    title: 'Raise ads budget',
    payload: { work: 'spend' },
    budgetChange: { amount: 50000, currency: 'USD', period: 'month', channel: 'ads' },
  },
  outbound_setup: {
    kind: 'approval',
    sourceType: 'outbound_setup',
    title: 'Start a weekly outbound run',
    payload: { proposal: { name: 'Weekly outbound' } },
  },
};

/** Inserts a card through the repository (the ladder already done unless `ladderChecked: false`). */
export async function buildCard(db: Queryable, accountId: string, kind: Kind, overrides: Partial<NewCard> = {}): Promise<Card> {
  return cardsRepository(db).insert({
    ...BASE[kind],
    id: newId('card'),
    accountId,
    actions: [],
    primaryLabel: '',
    ladderChecked: true,
    ...overrides,
  });
}

/** A live webhook hook made by the hook service (announced to intake); its id, URL, the path to POST to and its token. */
export async function buildHook(deps: Pick<Deps, 'config' | 'db' | 'redis'>, accountId: string, overrides: { label?: string } = {}) {
  const { hookId, url } = await createHook(deps, deps.config.baseUrl, { accountId, label: overrides.label ?? 'signup' });
  const path = new URL(url).pathname;
  return { hookId, url, path, token: path.split('/').pop()! };
}

/** A turn recorded by the agent service: by default a dashboard message saying hello; other kinds get no text unless given. */
export async function buildTurn(q: Queryable, config: Config, accountId: string, overrides: Partial<TurnInput> = {}): Promise<Recorded> {
  const kind = overrides.kind ?? 'message';
  return recordTurn(q, config, { accountId, kind, origin: 'dashboard', ...(kind === 'message' ? { text: 'hello' } : {}), ...overrides });
}

/** A lead upserted by the leads service; the default domain is unique to the call. */
export async function buildLead(
  q: Queryable,
  accountId: string,
  overrides: Partial<UpsertLeadInput> = {},
): Promise<{ id: string; created: boolean }> {
  return upsertLead(q, accountId, { domain: `${newId('lead').slice(5).toLowerCase()}.example.com`, ...overrides });
}

/**
 * A shipped mail's thread row as the shipping path writes it (its card a `mail_draft`), so a reply or a
 * bounce has something to find. `to` defaults to the card's recipient; the token and Message-ID are unique.
 */
export async function buildThread(
  db: Db,
  accountId: string,
  overrides: Partial<Thread & { replyToken: string }> = {},
): Promise<Thread & { replyToken: string }> {
  const cardId = overrides.cardId ?? (await buildCard(db, accountId, 'mail_draft')).id;
  const sendId = overrides.sendId ?? newId('send');
  const token = newId('rt').slice(3).toLowerCase();
  const thread = {
    sendId,
    accountId,
    cardId,
    leadId: null,
    sequenceId: null,
    step: 0,
    replyToken: token,
    messageId: `<mail-${sendId}@localhost>`,
    to: 'jane@acme.test',
    createdAt: Date.now(),
    ...overrides,
  };
  await threadsRepository(db).insert(thread);
  return { ...thread, tokenHash: hashReplyToken(thread.replyToken) };
}

/** A contacted lead at acme.test whose contact jane@acme.test was sent one mail: the thread a reply or bounce finds. */
export async function buildMailedLead(db: Db, accountId: string) {
  const lead = await buildLead(db, accountId, { domain: 'acme.test', status: 'contacted', contacts: [{ email: 'jane@acme.test' }] });
  const thread = await buildThread(db, accountId, { leadId: lead.id, to: 'jane@acme.test' });
  return { accountId, leadId: lead.id, thread };
}
