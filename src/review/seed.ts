import type { Db } from '../db.js';
import { newId } from '../ids.js';
import type { NewCard } from './cards/card.js';
import { addCard } from './cards/doors.js';

type DemoCard = Omit<NewCard, 'id' | 'accountId' | 'actions' | 'primaryLabel'>;

const HOUR = 3_600_000;

/** The demo blog post's body: a real, short post in Markdown (it publishes when the card is approved). */
const DEMO_POST = [
  'A spot quote that takes forty minutes loses to one that takes five. For most brokers the slow part is not pricing: ' +
    'it is gathering lane history, carrier rates and accessorials from three different screens.',
  '',
  '## The quoting bottleneck',
  '',
  'We looked at 1,200 quotes from three mid-sized brokers. Two thirds of the time went to looking things up, ' +
    'and a third of the quotes that lost were simply late.',
  '',
  '## What to automate first',
  '',
  '1. **Lane history**: show the last ten loads on the lane next to the request.',
  '2. **Carrier rates**: pull current rates from your top carriers automatically.',
  "3. **Accessorials**: apply the customer's usual charges without retyping them.",
  '',
  '## Results from three brokers',
  '',
  'Median quote time fell from 38 to 7 minutes, and win rates on spot freight rose by a fifth. ' +
    'Read the [full benchmark](https://example.com/freight-quote-benchmark) for the numbers behind it.',
].join('\n');

/** One pending card of every kind a newcomer can act on, with realistic go-to-market payloads. */
function demoCards(now: number): DemoCard[] {
  return [
    {
      kind: 'approval',
      sourceType: 'mail_draft',
      priority: 'high',
      title: 'Intro email to Priya Raman, VP Revenue Ops at Lumen Freight',
      summary: 'First touch: their dispatch team doubled this quarter; pitch automated lane quoting.',
      prompt: 'Send as drafted, request changes, or dismiss.',
      payload: {
        work: 'email',
        to: 'priya.raman@lumenfreight.example',
        draft: {
          subject: 'Quoting 40 lanes a day without new hires',
          body:
            'Hi Priya,\n\nI saw Lumen opened two new cross-dock sites this quarter. Teams at that stage usually find ' +
            'lane quoting is the bottleneck, not sales capacity.\n\nWe help RevOps teams quote in minutes from the TMS data ' +
            'they already have. Worth a 15-minute look next week?\n\nBest,\nSam',
        },
        research: {
          reasoning: 'Job posts for 6 dispatchers in 30 days; press release on the Reno and Tulsa sites.',
          sources: [{ url: 'https://lumenfreight.example/news', title: 'Lumen opens two sites' }],
        },
      },
    },
    {
      kind: 'approval',
      sourceType: 'mail_reply',
      priority: 'urgent',
      title: 'Reply to Marco Bell (Globex): asks about SOC 2 and pricing',
      summary: 'He is interested and wants the security report before a call.',
      prompt: 'Send the reply (edit the body if you like), or dismiss.',
      payload: {
        work: 'email',
        to: 'marco.bell@globex.example',
        inReplyTo: '<reply-7731@globex.example>',
        incoming: {
          from: 'marco.bell@globex.example',
          subject: 'Re: Quoting 40 lanes a day',
          body: 'Looks interesting. Are you SOC 2 compliant, and what does pricing look like for 12 seats?',
        },
        draft: {
          subject: 'Re: Quoting 40 lanes a day',
          body:
            'Hi Marco,\n\nYes, we are SOC 2 Type II; I can share the report under NDA. For 12 seats the Team plan is ' +
            '$1,450/month billed annually.\n\nWould Thursday 10:00 work for a walkthrough?\n\nSam',
        },
      },
    },
    {
      kind: 'approval',
      sourceType: 'network_message',
      title: 'Connection note to Dana Whitfield, Head of Growth at Northwind',
      summary: 'Dana posted about outbound reply rates dropping; offer the benchmark.',
      payload: {
        work: 'network_message',
        to: 'https://www.linkedin.com/in/dana-whitfield-demo',
        draft: { body: 'Dana, your post on falling reply rates matched what we see across 300 B2B teams. Happy to share the benchmark.' },
      },
    },
    {
      kind: 'approval',
      sourceType: 'blog_post',
      priority: 'low',
      title: 'Blog post: "How freight brokers cut quote time by 80%"',
      summary: 'Targets "freight quote automation" (900 searches/month); approving it publishes it to the Content API.',
      payload: {
        work: 'blog_post',
        draft: { title: 'How freight brokers cut quote time by 80%', markdown: DEMO_POST },
        excerpt: 'A quote that takes forty minutes loses to one that takes five. Three brokers show what to automate first.',
        tags: ['freight', 'quoting', 'automation'],
        author: 'Sam from Lumen',
      },
    },
    {
      kind: 'approval',
      sourceType: 'budget_change',
      priority: 'high',
      title: 'Raise the search ads budget from $40 to $65 a day',
      summary: 'CPA is $38 against a $60 target; the campaign is capped by budget by 14:00 most days.',
      budgetChange: { channel: 'ads', currency: 'USD', period: 'day', from: 4000, to: 6500, amount: 2500 },
      payload: {
        work: 'spend',
        campaign: 'Search - freight quoting',
        evidence: { cpa: 38_00, targetCpa: 60_00, lostImpressionShareBudget: 0.41 },
      },
    },
    {
      kind: 'approval',
      sourceType: 'outbound_setup',
      title: 'Set up a weekly outbound run for mid-market 3PLs',
      summary: 'Every Monday: find 25 new 3PLs with 50-500 staff, research, draft intros for review.',
      payload: {
        proposal: {
          name: 'Weekly 3PL outbound',
          scheduleText: 'every Monday at 09:00',
          steps: ['Find 25 new 3PLs', 'Research each', 'Draft intro emails for review'],
        },
      },
    },
    {
      kind: 'question',
      sourceType: 'agent_question',
      title: 'Should outbound mention the Tulsa case study by name?',
      prompt: 'The customer approved the quote but not the logo. Can I name them in emails?',
      textInput: { label: 'Your answer', placeholder: 'Yes, no, or how to phrase it', required: true, maxBytes: 8000 },
      payload: { context: 'Case study: 80% faster quoting at a Tulsa brokerage (approved quote, logo not approved).' },
    },
    {
      kind: 'choice',
      sourceType: 'agent_choice',
      title: 'Which segment should the next sequence target?',
      prompt: 'Choose one; I will draft the sequence for review.',
      options: [
        { value: 'brokers_50_200', label: 'Freight brokers, 50-200 staff' },
        { value: 'shippers_mid', label: 'Mid-market shippers' },
        { value: 'carriers_regional', label: 'Regional carriers' },
      ],
      dueAt: now + 48 * HOUR,
      payload: { reasoning: 'Brokers reply 2.1x more often; shippers have larger deals.' },
    },
  ];
}

/** Inserts the demo cards (the trust ladder looks at them on its next sweep). */
export async function seedReviewCards(db: Db, accountId: string, now = Date.now()) {
  const created = [];
  for (const [i, c] of demoCards(now).entries()) {
    const card = await addCard(db, { ...c, id: newId('card'), accountId, actions: [], primaryLabel: '', createdAt: now - i * 60_000 });
    created.push({ id: card.id, kind: card.kind, sourceType: card.sourceType, title: card.title, actions: card.actions });
  }
  return created;
}
