import { BLOG_PHRASES } from './offline-blog.js';
import { call, capitalise, mailBody, type OfflinePhrase, trimEnd } from './offline-calls.js';
import { EXPERIMENT_PHRASES } from './offline-experiments.js';
import { sequenceDraft } from './offline-wake.js';
import { WAKE_MAX_DAYS, WAKE_MIN_HOURS } from '../../tools/schedule-wake.js';

const UNIT_HOURS: Record<string, number> = { minute: 1 / 60, hour: 1, day: 24, week: 168 };

export const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[A-Za-z]{2,}$/;
export const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;

const notAnAddress = (to: string) => [call(1, 'reply', { text: `${to} does not look like an email address, so I drafted nothing.` })];

/**
 * The phrases the offline brain understands, in the order its "I understand a few phrases" reply names
 * them (they start with different words, so the order does not change which one matches). docs/agent.md
 * lists them from here: `npx tsx scripts/offline-phrases.ts` rewrites the list, and a test fails when it differs.
 */
export const OFFLINE_PHRASES: readonly OfflinePhrase[] = [
  {
    example: 'draft an email to ADDRESS about TOPIC',
    variants: ['draft an email to ADDRESS about TOPIC, linking to URL'],
    hint: '"draft an email to ADDRESS about TOPIC" (optionally "… linking to URL")',
    does:
      'a `mail_draft` review card with `to`, subject (the topic) and body; replies that it waits for review; ' +
      'with a link the body carries it (it ships as a tracked link)',
    pattern: /^draft an? (?:email|e-mail|mail) to (\S+) about ([\s\S]+?)(?:,?\s+linking to (\S+))?$/i,
    plan(m) {
      const to = m[1]!.replace(/[,;:]$/, '');
      const topic = trimEnd(m[2]!);
      const link = m[3] ? trimEnd(m[3]) : null;
      if (!EMAIL.test(to)) return notAnAddress(to);
      const subject = capitalise(topic).slice(0, 200);
      const greeting = to.split('@')[0]!.split(/[._-]/)[0] ?? '';
      // Account memory is private: it guides the agent and is never written into outbound mail.
      const body = mailBody(greeting, topic, link);
      // The reply comes in a second round, from what the tool did (it refuses blocked recipients).
      return [call(1, 'ship', { work: 'email', to, subject, body, title: `Email to ${to}: ${subject}` })];
    },
  },
  {
    example: 'block DOMAIN',
    variants: ['block ADDRESS'],
    hint: '"block DOMAIN-or-ADDRESS"',
    does: 'adds it to the block list (source `agent`)',
    pattern: /^block (\S+)$/i,
    cutEnd: true,
    plan(m) {
      const value = m[1]!.toLowerCase();
      if (!EMAIL.test(value) && !DOMAIN.test(value)) {
        return [call(1, 'reply', { text: `${m[1]} is neither a domain nor an email address, so I blocked nothing.` })];
      }
      return [call(1, 'block', { value, reason: 'asked in chat' }), call(2, 'reply', { text: `Blocked ${value}: I will not contact it.` })];
    },
  },
  {
    example: 'remember NOTE',
    variants: ['remember that NOTE'],
    hint: '"remember …"',
    does: 'keeps it in account memory; later replies mention it, drafts never quote it',
    pattern: /^remember(?: that)?[:,]?\s+([\s\S]+)$/i,
    plan(m) {
      const note = trimEnd(m[1]!);
      return [call(1, 'remember', { text: note }), call(2, 'reply', { text: `Noted. I will remember: ${note}.` })];
    },
  },
  {
    example: 'what do you remember',
    hint: '"what do you remember"',
    does: 'lists the account memory',
    pattern: /^what do you remember\??$/i,
    plan(_m, ctx) {
      if (!ctx.memory.length)
        return [call(1, 'reply', { text: 'I have nothing in memory yet. Tell me "remember …" to keep a preference.' })];
      const notes = ctx.memory.map((n) => `"${n}"`).join('; ');
      return [call(1, 'reply', { text: `I remember ${ctx.memory.length} thing${ctx.memory.length === 1 ? '' : 's'}: ${notes}.` })];
    },
  },
  {
    example: 'what is waiting',
    variants: ["what's waiting"],
    hint: '"what is waiting"',
    does: 'summarises the review queue',
    pattern: /^what(?:'s| is) waiting\??$/i,
    async plan(_m, ctx) {
      const { waiting, count } = await ctx.reviewQueue();
      if (!count) return [call(1, 'reply', { text: 'Nothing is waiting for your review.' })];
      const list = waiting.map((c, i) => `${i + 1}. ${c.title} (${c.sourceType})`).join('\n');
      const more = count > waiting.length ? `\n…and ${count - waiting.length} more.` : '';
      return [
        call(1, 'reply', { text: `${count} card${count === 1 ? ' is' : 's are'} waiting for your review:` }),
        call(2, 'reply', { text: list + more }),
      ];
    },
  },
  {
    example: 'propose a workflow to TASK every SCHEDULE',
    hint: '"propose a workflow to TASK every SCHEDULE"',
    does: 'a `workflow_proposal` approval card; approving it makes the workflow live',
    pattern: /^propose a workflow to ([\s\S]+?) (every [\s\S]+)$/i,
    cutEnd: true,
    plan(m) {
      const name = capitalise(m[1]!.trim()).slice(0, 120);
      const scheduleText = m[2]!.trim().slice(0, 200);
      return [
        call(1, 'propose_workflow', { name, scheduleText, steps: [{ title: name }] }),
        call(2, 'reply', { text: `I proposed a workflow "${name}" (${scheduleText}). Approve it in your review queue to make it live.` }),
      ];
    },
  },
  {
    example: 'start a sequence to ADDRESS about TOPIC',
    variants: ['start an email sequence to ADDRESS about TOPIC'],
    hint: '"start a sequence to ADDRESS about TOPIC"',
    does:
      'a `sequence` review card: a first mail and two follow-ups (3 and then 4 more days later) sent only if no reply comes; ' +
      'replies that it waits for review',
    pattern: /^start an? (?:email )?sequence to (\S+) about ([\s\S]+)$/i,
    plan(m) {
      const to = m[1]!.replace(/[,;:]$/, '');
      if (!EMAIL.test(to)) return notAnAddress(to);
      return [call(1, 'ship', sequenceDraft(to, trimEnd(m[2]!)))];
    },
  },
  {
    example: 'check back on TOPIC in N days',
    variants: ['follow up with TOPIC in an hour'],
    hint: '"check back on TOPIC in N days"',
    does:
      `schedules a wake (minutes, hours, days or weeks; one minute to ${WAKE_MAX_DAYS} days ahead); ` +
      'when it comes, a `check_back` question card; `/agent/status` counts it',
    pattern: /^(?:please )?(?:check back|follow up) (?:on|with) ([\s\S]+?) in (\d+(?:\.\d+)?|an?|one) (minute|hour|day|week)s?$/i,
    cutEnd: true,
    plan(m) {
      const note = trimEnd(m[1]!).slice(0, 500);
      const n = /^(a|an|one)$/i.test(m[2]!) ? 1 : Number(m[2]);
      const inHours = n * UNIT_HOURS[m[3]!.toLowerCase()]!;
      if (!(inHours >= WAKE_MIN_HOURS && inHours <= WAKE_MAX_DAYS * 24)) {
        return [call(1, 'reply', { text: `I can check back from one minute to ${WAKE_MAX_DAYS} days ahead, so I scheduled nothing.` })];
      }
      return [
        call(1, 'schedule_wake', { note, inHours }),
        call(2, 'reply', { text: `I will check back on ${note} in ${m[2]} ${m[3]}${n === 1 ? '' : 's'}.` }),
      ];
    },
  },
  {
    example: 'add lead DOMAIN',
    variants: ['record lead DOMAIN'],
    hint: '"add lead DOMAIN"',
    does: 'records a lead',
    pattern: /^(?:add|record) lead (\S+)$/i,
    cutEnd: true,
    plan(m) {
      const domain = m[1]!.toLowerCase();
      if (!DOMAIN.test(domain)) return [call(1, 'reply', { text: `${m[1]} is not a domain, so I recorded no lead.` })];
      return [call(1, 'upsert_lead', { domain }), call(2, 'reply', { text: `Recorded ${domain} as a lead.` })];
    },
  },
  ...BLOG_PHRASES,
  ...EXPERIMENT_PHRASES,
];

/** What a message no phrase matches gets. */
export const OFFLINE_OTHERWISE = {
  example: 'anything else',
  does: 'acknowledges it and lists these phrases (and mentions your latest note, if any)',
};

/** The phrase the message is, with its match, or null. */
export function matchPhrase(text: string): { phrase: OfflinePhrase; m: RegExpExecArray } | null {
  for (const phrase of OFFLINE_PHRASES) {
    const m = phrase.pattern.exec(phrase.cutEnd ? trimEnd(text) : text);
    if (m) return { phrase, m };
  }
  return null;
}

/** The phrases as the reply to a message no phrase matches names them: `"a", "b" and "c"`. */
export function phraseHints(): string {
  const hints = OFFLINE_PHRASES.flatMap((p) => (p.hint ? [p.hint] : []));
  return `${hints.slice(0, -1).join(', ')} and ${hints.at(-1)}`;
}
