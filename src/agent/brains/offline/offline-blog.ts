import type { ToolCall, ToolResult } from '../../core/brain.js';
import { call, capitalise, type OfflinePhrase, trimEnd } from './offline-calls.js';

const WRITE = /^write an? blog post about ([\s\S]+?)(?:,?\s+linking to (\S+))?$/i;
const UNPUBLISH = /^unpublish the blog post (\S+)$/i;
/** A post's slug (src/content/slug.ts): lowercase ascii words joined by '-'. */
const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const STOP = new Set(['a', 'an', 'and', 'the', 'of', 'for', 'to', 'in', 'on', 'with', 'how', 'why', 'what', 'our', 'your', 'about']);

/** Up to three tags from the topic's words. */
function tagsOf(topic: string): string[] {
  const words = topic.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return [...new Set(words.filter((w) => w.length > 2 && !STOP.has(w)))].slice(0, 3);
}

/** A short post about a topic: an intro paragraph, three sections, and a call to action when a link is given. */
export function blogDraft(topic: string, link: string | null): { title: string; markdown: string; excerpt: string; tags: string[] } {
  const title = capitalise(topic).slice(0, 200);
  const intro =
    `Most teams know ${topic} matters, but few have a plan for it that survives a busy quarter. ` +
    'This post sets out why it matters now, where to start, and how to tell whether it is working.';
  const sections = [
    intro,
    '',
    `## Why ${topic} matters now`,
    '',
    `Buyers do their own research long before they talk to anyone. Clear, useful writing about ${topic} is how they find you, ` +
      'and how they decide you understand their problem.',
    '',
    '## Where to start',
    '',
    `- Pick the one question about ${topic} your customers ask most often.`,
    '- Answer it plainly, with an example from your own work.',
    '- Publish it, then link to it from your emails and your site.',
    '',
    '## How to tell it is working',
    '',
    'Count the visits each post brings and the conversations that follow. A post that brings a few of the right readers ' +
      'beats one that brings many of the wrong ones.',
  ];
  if (link) sections.push('', `Want to see how this works for your team? [Take the next step](${link}).`);
  return { title, markdown: sections.join('\n'), excerpt: intro, tags: tagsOf(topic) };
}

/** The blog phrases: "write a blog post about TOPIC [linking to URL]" and "unpublish the blog post SLUG". */
export const BLOG_PHRASES: readonly OfflinePhrase[] = [
  {
    example: 'write a blog post about TOPIC',
    variants: ['write a blog post about TOPIC, linking to URL'],
    hint: '"write a blog post about TOPIC" (optionally "… linking to URL")',
    does:
      'a `blog_post` card: title, a short Markdown post (an intro and three `##` sections), excerpt, tags; with a link, ' +
      'the post ends with it as its call to action; replies that it waits for review, or that it publishes now where the ' +
      'account lets blog posts run without approval',
    pattern: WRITE,
    cutEnd: true,
    plan(m) {
      const link = m[2] ? m[2].replace(/[.,;:!?]+$/, '') : null;
      if (link && !/^https?:\/\/[^\s/]+\.[^\s]+$/i.test(link)) {
        return [call(1, 'reply', { text: `${link} is not an http(s) link, so I drafted nothing.` })];
      }
      const d = blogDraft(trimEnd(m[1]!), link);
      return [
        call(1, 'ship', {
          work: 'blog_post',
          title: `Blog post: ${d.title}`.slice(0, 200),
          subject: d.title,
          body: d.markdown,
          details: { excerpt: d.excerpt, tags: d.tags },
        }),
      ];
    },
  },
  {
    example: 'unpublish the blog post SLUG',
    hint: '"unpublish the blog post SLUG"',
    does: "a `blog_post` card with `op: 'unpublish'` and the slug; approving it takes the post down (a 409 if no post has that slug)",
    pattern: UNPUBLISH,
    cutEnd: true,
    plan(m) {
      const slug = m[1]!.toLowerCase();
      if (!SLUG.test(slug)) return [call(1, 'reply', { text: `${m[1]} is not a post's slug, so I changed nothing.` })];
      return [call(1, 'ship', { work: 'blog_post', title: `Unpublish the blog post ${slug}`, details: { op: 'unpublish', slug } })];
    },
  },
];

/** After a blog phrase's `ship` call: what happened, truthfully (waiting for review, or shipping by the account's setting). */
export function blogReply(text: string, result: ToolResult): ToolCall[] | null {
  const write = WRITE.exec(trimEnd(text));
  const down = UNPUBLISH.exec(trimEnd(text));
  if (!write && !down) return null;
  if (!result.ok) return [call(2, 'reply', { text: `I drafted nothing: ${result.result}.` })];
  const what = write
    ? `I drafted a blog post about ${trimEnd(write[1]!)}`
    : `I asked to unpublish the blog post ${down![1]!.toLowerCase()}`;
  const card = /card (\S+?)[;,]? /.exec(`${result.result} `)?.[1];
  const state = /runs without approval/.test(result.result)
    ? `This account lets blog posts run without approval, so card ${card} ${write ? 'publishes it' : 'takes it down'} now.`
    : /cannot ship/.test(result.result)
      ? `It waits as card ${card} and cannot ship yet: ${result.result}.`
      : `It is waiting in your review queue as card ${card}; nothing is ${write ? 'published' : 'changed'} until you approve it.`;
  return [call(2, 'reply', { text: `${what}. ${state}` })];
}
