import type { Brain, BrainContext, BrainStep, ToolCall, ToolResult } from '../../core/brain.js';
import { blogReply } from './offline-blog.js';
import { experimentReply } from './offline-experiments.js';
import { call, capitalise, trimEnd } from './offline-calls.js';
import { DOMAIN, EMAIL, matchPhrase, phraseHints } from './offline-phrases.js';
import { planWake } from './offline-wake.js';

/** A message is matched against the phrases the offline brain understands (src/agent/brains/offline/offline-phrases.ts). */
async function plan(ctx: BrainContext): Promise<ToolCall[]> {
  const { input } = ctx;
  if (input.kind === 'event') return planEvent(ctx);
  if (input.kind === 'wake') return planWake(ctx);
  if (input.kind !== 'message') {
    return [call(1, 'reply', { text: `Woke for a ${input.kind.replace('_', ' ')}; nothing needs your attention right now.` })];
  }
  const text = input.text.trim();
  const matched = matchPhrase(text);
  if (matched) return matched.phrase.plan(matched.m, ctx);

  const calls = [
    call(1, 'reply', { text: `Got it: "${text.length > 200 ? `${text.slice(0, 200)}…` : text}".` }),
    call(2, 'reply', { text: `I am running offline, so I understand a few phrases: ${phraseHints()}.` }),
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
  // A default an experiment decided (the ship tool says which it used).
  const used = /; it uses (the default an experiment decided [\s\S]+)$/.exec(result.result)?.[1];
  return [
    call(2, 'reply', {
      text:
        `I drafted ${what} to ${to} about ${topic}${used ? `; it uses ${used}` : ''}. ` +
        'It is waiting in your review queue; nothing is sent until you approve it.',
    }),
  ];
}

/** Tools whose result the reply depends on: the reply comes in a second round. */
const REPLY_AFTER = ['ship', 'propose_experiment', 'read_results'];

/** Deterministic, no network: one round that plans every call from the input (a draft, an experiment or a reading take two). */
export const offlineBrain: Brain = {
  name: 'offline',
  async step(ctx: BrainContext, transcript): Promise<BrainStep> {
    if (transcript.length === 1 && ctx.input.kind === 'message') {
      const result = transcript[0]!.results.find((r) => REPLY_AFTER.includes(r.name));
      if (result?.name === 'ship') return { calls: draftReply(ctx, result), done: true };
      if (result) return { calls: experimentReply(ctx.input.text, result) ?? [], done: true };
    }
    if (transcript.length) return { calls: [], done: true };
    const calls = await plan(ctx);
    return { calls, done: !calls.some((c) => REPLY_AFTER.includes(c.name)) };
  },
};
