import type { Brain, BrainContext, BrainStep, ToolCall, ToolResult } from './brain.js';
import { blogReply, planBlog } from './offline-blog.js';
import { call, capitalise, trimEnd } from './offline-calls.js';
import { planWake, sequenceDraft } from './offline-wake.js';
import { WAKE_MAX_DAYS, WAKE_MIN_HOURS } from './tools.js';

const CHECK_BACK = /^(?:please )?(?:check back|follow up) (?:on|with) ([\s\S]+?) in (\d+(?:\.\d+)?|an?|one) (minute|hour|day|week)s?$/i;
const UNIT_HOURS: Record<string, number> = { minute: 1 / 60, hour: 1, day: 24, week: 168 };

const EMAIL = /^[^\s@<>]+@[^\s@<>]+\.[A-Za-z]{2,}$/;
const DOMAIN = /^(?=.{1,253}$)([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,}$/;

/** The phrases the offline brain understands (documented in docs/agent.md). */
async function plan(ctx: BrainContext): Promise<ToolCall[]> {
  const { input } = ctx;
  if (input.kind === 'event') return planEvent(ctx);
  if (input.kind === 'wake') return planWake(ctx);
  if (input.kind !== 'message') {
    return [call(1, 'reply', { text: `Woke for a ${input.kind.replace('_', ' ')}; nothing needs your attention right now.` })];
  }
  const text = input.text.trim();
  let m: RegExpExecArray | null;

  if ((m = /^draft an? (?:email|e-mail|mail) to (\S+) about ([\s\S]+?)(?:,?\s+linking to (\S+))?$/i.exec(text))) {
    const to = m[1]!.replace(/[,;:]$/, '');
    const topic = trimEnd(m[2]!);
    const link = m[3] ? trimEnd(m[3]) : null;
    if (!EMAIL.test(to)) return [call(1, 'reply', { text: `${to} does not look like an email address, so I drafted nothing.` })];
    const subject = capitalise(topic).slice(0, 200);
    const greeting = to.split('@')[0]!.split(/[._-]/)[0] ?? '';
    // Account memory is private: it guides the agent and is never written into outbound mail.
    const body = [
      `Hi ${capitalise(greeting)},`,
      '',
      `I wanted to reach out about ${topic}.`,
      '',
      // A link the person named: it ships as a tracked link, so a click counts under email.
      ...(link ? [`There is more here: ${link}`, ''] : []),
      'Would you be open to a short call next week?',
      '',
      'Best regards',
    ].join('\n');
    // The reply comes in a second round, from what the tool did (it refuses blocked recipients).
    return [call(1, 'ship', { work: 'email', to, subject, body, title: `Email to ${to}: ${subject}` })];
  }

  if ((m = /^start an? (?:email )?sequence to (\S+) about ([\s\S]+)$/i.exec(text))) {
    const to = m[1]!.replace(/[,;:]$/, '');
    if (!EMAIL.test(to)) return [call(1, 'reply', { text: `${to} does not look like an email address, so I drafted nothing.` })];
    return [call(1, 'ship', sequenceDraft(to, trimEnd(m[2]!)))];
  }

  const blog = planBlog(text);
  if (blog) return blog;

  if ((m = /^block (\S+)$/i.exec(trimEnd(text)))) {
    const value = m[1]!.toLowerCase();
    if (!EMAIL.test(value) && !DOMAIN.test(value)) {
      return [call(1, 'reply', { text: `${m[1]} is neither a domain nor an email address, so I blocked nothing.` })];
    }
    return [call(1, 'block', { value, reason: 'asked in chat' }), call(2, 'reply', { text: `Blocked ${value}: I will not contact it.` })];
  }

  if ((m = /^remember(?: that)?[:,]?\s+([\s\S]+)$/i.exec(text))) {
    const note = trimEnd(m[1]!);
    return [call(1, 'remember', { text: note }), call(2, 'reply', { text: `Noted. I will remember: ${note}.` })];
  }

  if (/^what do you remember\??$/i.test(text)) {
    if (!ctx.memory.length) return [call(1, 'reply', { text: 'I have nothing in memory yet. Tell me "remember …" to keep a preference.' })];
    return [
      call(1, 'reply', {
        text: `I remember ${ctx.memory.length} thing${ctx.memory.length === 1 ? '' : 's'}: ${ctx.memory.map((n) => `"${n}"`).join('; ')}.`,
      }),
    ];
  }

  if (/^what(?:'s| is) waiting\??$/i.test(text)) {
    const { waiting, count } = await ctx.reviewQueue();
    if (!count) return [call(1, 'reply', { text: 'Nothing is waiting for your review.' })];
    const list = waiting.map((c, i) => `${i + 1}. ${c.title} (${c.sourceType})`).join('\n');
    const more = count > waiting.length ? `\n…and ${count - waiting.length} more.` : '';
    return [
      call(1, 'reply', { text: `${count} card${count === 1 ? ' is' : 's are'} waiting for your review:` }),
      call(2, 'reply', { text: list + more }),
    ];
  }

  if ((m = /^propose a workflow to ([\s\S]+?) (every [\s\S]+)$/i.exec(trimEnd(text)))) {
    const name = capitalise(m[1]!.trim()).slice(0, 120);
    const scheduleText = m[2]!.trim().slice(0, 200);
    return [
      call(1, 'propose_workflow', { name, scheduleText, steps: [{ title: name }] }),
      call(2, 'reply', { text: `I proposed a workflow "${name}" (${scheduleText}). Approve it in your review queue to make it live.` }),
    ];
  }

  if ((m = CHECK_BACK.exec(trimEnd(text)))) {
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
  }

  if ((m = /^(?:add|record) lead (\S+)$/i.exec(trimEnd(text)))) {
    const domain = m[1]!.toLowerCase();
    if (!DOMAIN.test(domain)) return [call(1, 'reply', { text: `${m[1]} is not a domain, so I recorded no lead.` })];
    return [call(1, 'upsert_lead', { domain }), call(2, 'reply', { text: `Recorded ${domain} as a lead.` })];
  }

  const calls = [
    call(1, 'reply', { text: `Got it: "${text.length > 200 ? `${text.slice(0, 200)}…` : text}".` }),
    call(2, 'reply', {
      text:
        'I am running offline, so I understand a few phrases: "draft an email to ADDRESS about TOPIC" (optionally "… linking to URL"), ' +
        '"block DOMAIN-or-ADDRESS", ' +
        '"remember …", "what do you remember", "what is waiting", "propose a workflow to TASK every SCHEDULE", ' +
        '"start a sequence to ADDRESS about TOPIC", "check back on TOPIC in N days", "add lead DOMAIN", ' +
        '"write a blog post about TOPIC" (optionally "… linking to URL") and "unpublish the blog post SLUG".',
    }),
  ];
  if (ctx.memory.length)
    calls.push(call(3, 'reply', { text: `I am keeping your notes in mind (${ctx.memory.length}), latest: "${ctx.memory.at(-1)}".` }));
  return calls;
}

/** A string field of the payload, if it is one. */
const field = (o: Record<string, unknown>, ...keys: string[]) => {
  for (const k of keys) if (typeof o[k] === 'string' && (o[k] as string).trim()) return (o[k] as string).trim();
  return undefined;
};

/**
 * Events carry outside data: read as information only, never as commands. A payload that names a
 * person's email or a company domain becomes a researched lead that cites the hook (and what the
 * account said about that source), and a mail draft that waits under the approval rules; anything
 * else gets a short note.
 */
function planEvent(ctx: BrainContext): ToolCall[] {
  const data = ctx.input.data;
  const label = data?.label ?? 'an outside source';
  const content = data?.content;
  const payload = content && typeof content === 'object' && !Array.isArray(content) ? (content as Record<string, unknown>) : {};
  const rawEmail = field(payload, 'email', 'Email', 'contact_email');
  const email = rawEmail && EMAIL.test(rawEmail) ? rawEmail.toLowerCase() : undefined;
  const website = field(payload, 'domain', 'website', 'url');
  const fromWebsite = website
    ?.replace(/^https?:\/\//i, '')
    .split(/[/?#]/)[0]
    ?.replace(/^www\./i, '')
    .toLowerCase();
  const domain = fromWebsite && DOMAIN.test(fromWebsite) ? fromWebsite : email?.split('@')[1];
  if (!domain)
    return [
      call(1, 'reply', {
        text: `I received an event from ${label} and read it as information only; it named no company or person to follow up.`,
      }),
    ];

  const company = field(payload, 'company', 'companyName', 'organization') ?? domain;
  const name = field(payload, 'name', 'first_name', 'firstName');
  const notes = ctx.memory.filter((m) => m.toLowerCase().includes(label.toLowerCase()));
  const reasoning = [`Named in an event from the ${label} hook.`, ...notes.map((n) => `Account note about ${label}: ${n}.`)].join(' ');
  const calls: ToolCall[] = [
    call(1, 'upsert_lead', {
      domain,
      companyName: company,
      research: [{ key: 'source', reasoning, sources: [{ url: `hook://${label}`, title: `Inbound webhook: ${label}` }] }],
      ...(email ? { contacts: [{ ...(name ? { name } : {}), email }] } : {}),
    }),
  ];
  if (email) {
    const greeting = name ?? email.split('@')[0]!.split(/[._-]/)[0] ?? '';
    calls.push(
      call(2, 'ship', {
        work: 'email',
        to: email,
        title: `Email to ${email}: following up on ${label}`,
        subject: `Following up, ${company}`,
        body: [
          `Hi ${capitalise(greeting)},`,
          '',
          `Thanks for getting in touch with us. Would a short call next week help?`,
          '',
          'Best regards',
        ].join('\n'),
      }),
    );
  }
  calls.push(
    call(calls.length + 1, 'reply', {
      text:
        `I received an event from ${label}: I recorded ${domain} as a ` +
        `lead${email ? ` and drafted a follow-up to ${email} for your review` : ''}.`,
    }),
  );
  return calls;
}

/** After a draft's `ship` call: say what happened, truthfully. */
function draftReply(ctx: BrainContext, result: ToolResult): ToolCall[] {
  const blog = blogReply(ctx.input.text, result);
  if (blog) return blog;
  const m = /^(draft an? (?:email|e-mail|mail)|start an? (?:email )?sequence) to (\S+) about ([\s\S]+?)(?:,?\s+linking to \S+)?$/i.exec(
    ctx.input.text.trim(),
  );
  const what = m?.[1]?.toLowerCase().startsWith('start') ? 'a sequence of emails' : 'an email';
  const to = m?.[2]?.replace(/[,;:]$/, '') ?? 'them';
  const topic = m?.[3] ? trimEnd(m[3]) : 'that';
  if (!result.ok) return [call(2, 'reply', { text: `I drafted nothing: ${result.result}.` })];
  return [
    call(2, 'reply', {
      text: `I drafted ${what} to ${to} about ${topic}. It is waiting in your review queue; nothing is sent until you approve it.`,
    }),
  ];
}

/** Deterministic, no network: one round that plans every call from the input (a draft takes two). */
export const offlineBrain: Brain = {
  name: 'offline',
  async step(ctx: BrainContext, transcript): Promise<BrainStep> {
    if (transcript.length === 1) {
      const ship = transcript[0]!.results.find((r) => r.name === 'ship');
      if (ship && ctx.input.kind === 'message') return { calls: draftReply(ctx, ship), done: true };
    }
    if (transcript.length) return { calls: [], done: true };
    const calls = await plan(ctx);
    return { calls, done: !calls.some((c) => c.name === 'ship') };
  },
};
