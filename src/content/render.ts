import MarkdownIt from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

/** Raw HTML in the markdown is shown as text (html: false); bare URLs become links. */
const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

/**
 * What a published post's HTML may hold: the blog's prose elements, links and images over http(s)
 * (mailto for links) only. No scripts, no event handlers, no style or class attributes, no iframes.
 */
const ALLOW: sanitizeHtml.IOptions = {
  allowedTags: [
    'h1',
    'h2',
    'h3',
    'h4',
    'h5',
    'h6',
    'p',
    'br',
    'hr',
    'ul',
    'ol',
    'li',
    'a',
    'code',
    'pre',
    'blockquote',
    'em',
    'strong',
    's',
    'img',
    'table',
    'thead',
    'tbody',
    'tr',
    'th',
    'td',
  ],
  allowedAttributes: { a: ['href', 'title'], img: ['src', 'alt', 'title'], ol: ['start'] },
  allowedSchemes: ['http', 'https'],
  allowedSchemesByTag: { a: ['http', 'https', 'mailto'], img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  disallowedTagsMode: 'discard',
};

/** Markdown → sanitised HTML (before tracked links are put in). Deterministic for the same text. */
export function renderMarkdown(markdown: string): string {
  return sanitizeHtml(md.render(markdown), ALLOW).trim();
}

export const EXCERPT_MAX = 300;

/** The text of the first paragraph (not a heading), cut at EXCERPT_MAX characters on a word where it can. */
export function excerptOf(markdown: string): string {
  const tokens = md.parse(markdown, {});
  const open = tokens.findIndex((t, i) => t.type === 'inline' && tokens[i - 1]?.type === 'paragraph_open');
  if (open < 0) return '';
  const text = (tokens[open]!.children ?? [])
    .map((c) => (c.type === 'text' || c.type === 'code_inline' ? c.content : c.type === 'softbreak' ? ' ' : ''))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  if (text.length <= EXCERPT_MAX) return text;
  const cut = text.slice(0, EXCERPT_MAX - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > EXCERPT_MAX / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
