import type { BrainContext, ToolCall } from '../../core/brain.js';
import { call, capitalise } from './offline-calls.js';

/** Days the offline brain waits before checking back on a lead who answered "not now". */
export const NOT_NOW_DAYS = 30;

const str = (o: Record<string, unknown>, k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');

/**
 * A wake: a mail or network reply (outside data, read as information only) or a wake the agent scheduled.
 * - A reply that wants an answer (interested, question, referral, other): a follow-up mail in the same
 *   thread (In-Reply-To the reply, References the whole chain), or a network message to the profile that answered, waiting
 *   for review like any draft. Its words are ours: the sender's text is never copied into it.
 * - "Not now": a wake in NOT_NOW_DAYS days. A decline or "wrong person": no follow-up.
 * - A scheduled wake: a question card reminding the person what the agent was to check back on.
 */
export function planWake(ctx: BrainContext): ToolCall[] {
  const data = ctx.input.data;
  const content = data?.content && typeof data.content === 'object' && !Array.isArray(data.content) ? data.content : null;
  if (data?.label === 'mail reply' && content) return planMailReply(content as Record<string, unknown>);
  if (data?.label === 'network reply' && content) return planNetworkReply(content as Record<string, unknown>);
  const note = ctx.input.text.replace(/^Check back:\s*/i, '').trim() || 'something you asked me about';
  return [
    call(1, 'create_card', {
      kind: 'question',
      sourceType: 'check_back',
      title: `Check back: ${note}`.slice(0, 200),
      prompt: `You asked me to check back on ${note}. What should happen next?`.slice(0, 2_000),
    }),
    call(2, 'reply', { text: `Checking back on ${note}: I put a card in your review queue.` }),
  ];
}

function planMailReply(c: Record<string, unknown>): ToolCall[] {
  const from = str(c, 'from');
  const kind = str(c, 'replyKind') || 'other';
  if (kind === 'not_now') {
    return [
      call(1, 'schedule_wake', { note: `follow up with ${from}, who said not now`, inHours: NOT_NOW_DAYS * 24 }),
      call(2, 'reply', { text: `${from} said not now; I will check back in ${NOT_NOW_DAYS} days.` }),
    ];
  }
  if (kind !== 'interested' && kind !== 'question' && kind !== 'referral' && kind !== 'other') {
    return [call(1, 'reply', { text: `${from} replied (${kind.replace('_', ' ')}); I will not follow up.` })];
  }
  const topic = str(c, 'subject')
    .replace(/^\s*((re|aw|sv|fw|fwd)\s*:\s*)+/i, '')
    .trim()
    .slice(0, 150);
  const greeting = capitalise(from.split('@')[0]?.split(/[._-]/)[0] ?? '');
  const lines: Record<string, string> = {
    interested: 'Thanks for getting back to me. Glad this is of interest. Would Tuesday or Thursday next week suit you for a short call?',
    question: 'Thanks for your question. Happy to go through it properly; would a short call next week help?',
    referral: 'Thanks for pointing me in the right direction. I will reach out to them and mention you suggested it.',
    other: 'Thanks for your reply. Would a short call next week be useful?',
  };
  return [
    call(1, 'ship', {
      work: 'email',
      to: from,
      title: `Reply to ${from}: ${topic || 'your message'}`.slice(0, 200),
      subject: `Re: ${topic || 'our conversation'}`,
      body: [`Hi ${greeting},`, '', lines[kind], '', 'Best regards'].join('\n'),
    }),
    call(2, 'reply', { text: `${from} replied (${kind}); I drafted a follow-up in the same thread for your review.` }),
  ];
}

/** What the agent answers a network reply with (kinds that want no answer get none, as for mail). */
const NETWORK_LINES: Record<string, string> = {
  interested: 'Thanks for getting back to me, glad this is of interest. Would a short call next week suit you?',
  question: 'Thanks for your question. Happy to go through it properly; would a short call next week help?',
  referral: 'Thanks for pointing me in the right direction. I will reach out to them and mention you suggested it.',
  other: 'Thanks for your reply. Would a short call next week be useful?',
};

function planNetworkReply(c: Record<string, unknown>): ToolCall[] {
  const from = str(c, 'from');
  const kind = str(c, 'replyKind') || 'other';
  if (kind === 'not_now') {
    return [
      call(1, 'schedule_wake', { note: `follow up with ${from} on the network, who said not now`, inHours: NOT_NOW_DAYS * 24 }),
      call(2, 'reply', { text: `${from} said not now on the network; I will check back in ${NOT_NOW_DAYS} days.` }),
    ];
  }
  const line = NETWORK_LINES[kind];
  if (!line || !from) {
    return [call(1, 'reply', { text: `${from} replied on the network (${kind.replace('_', ' ')}); I will not follow up.` })];
  }
  const greeting = capitalise(from.split('/in/')[1]?.split(/[-_.]/)[0] ?? '');
  return [
    call(1, 'ship', {
      work: 'network_message',
      to: from,
      title: `Reply to ${from}`.slice(0, 200),
      body: [greeting ? `Hi ${greeting},` : 'Hi,', '', line].join('\n'),
    }),
    call(2, 'reply', { text: `${from} replied on the network (${kind}); I drafted an answer for your review.` }),
  ];
}

/** Days between the steps of a sequence the offline brain drafts: the first follow-up, then the second. */
export const SEQUENCE_DELAYS_DAYS = [3, 4] as const;

/** The ship call for "start a sequence to ADDRESS about TOPIC": a first mail and two follow-ups, if no reply. */
export function sequenceDraft(to: string, topic: string): Record<string, unknown> {
  const subject = capitalise(topic).slice(0, 200);
  const greeting = capitalise(to.split('@')[0]!.split(/[._-]/)[0] ?? '');
  const mail = (...lines: string[]) => [`Hi ${greeting},`, '', ...lines, '', 'Best regards'].join('\n');
  return {
    work: 'sequence',
    to,
    title: `Sequence to ${to}: ${subject}`.slice(0, 200),
    subject,
    body: mail(`I wanted to reach out about ${topic}.`, '', 'Would you be open to a short call next week?'),
    details: {
      steps: [
        { body: mail(`Following up on my note about ${topic}. Is this something you are looking at this quarter?`), delayDays: 3 },
        {
          body: mail(`One last note about ${topic}: if the timing is wrong, just say so and I will not write again.`),
          delayDays: SEQUENCE_DELAYS_DAYS[1],
        },
      ],
    },
  };
}
