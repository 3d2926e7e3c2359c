import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import MarkdownIt from 'markdown-it';

/**
 * The contents list each file of docs/decisions/ opens with, written from its headings (## and ###).
 * Run `npx tsx scripts/decisions-contents.ts` after adding or renaming an entry; test/architecture/docs.test.ts
 * fails while a list differs from its file's headings.
 */
export const DECISIONS_DIR = join(import.meta.dirname, '..', 'docs', 'decisions');
const START = '<!-- contents -->';
const END = '<!-- /contents -->';
const md = new MarkdownIt({ html: true });

/** Each heading as GitHub anchors it: lowercased, punctuation dropped, spaces to hyphens, repeats numbered. */
export function headingsOf(markdown: string): { level: number; text: string; anchor: string }[] {
  const seen = new Map<string, number>();
  const tokens = md.parse(markdown, {});
  return tokens.flatMap((t, i) => {
    if (t.type !== 'heading_open') return [];
    const inline = tokens[i + 1]?.children ?? [];
    const text = inline.map((c) => (c.type === 'text' || c.type === 'code_inline' ? c.content : '')).join('');
    const base = text
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    return [{ level: Number(t.tag.slice(1)), text: tokens[i + 1]?.content ?? '', anchor: n ? `${base}-${n}` : base }];
  });
}

/** The file with its contents block written from its headings (## always; ### nested when there are several ##). */
export function withContents(text: string): string {
  const markdown = withMarkers(text);
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`a decisions file needs the lines ${START} and ${END}`);
  const headings = headingsOf(markdown).filter((h) => h.level === 2 || h.level === 3);
  const nested = headings.filter((h) => h.level === 2).length > 1;
  const items = headings.map((h) => `${h.level === 3 && nested ? '  ' : ''}- [${h.text}](#${h.anchor})`);
  return `${markdown.slice(0, start + START.length)}\n\nContents:\n\n${items.join('\n')}\n\n${markdown.slice(end)}`;
}

/** A new file without a contents block gets one before its first `## ` heading (or at its end). */
function withMarkers(markdown: string): string {
  if (markdown.includes(START)) return markdown;
  const first = markdown.search(/^## /m);
  const at = first < 0 ? markdown.length : first;
  return `${markdown.slice(0, at)}${START}\n${END}\n\n${markdown.slice(at)}`;
}

export const decisionFiles = () =>
  readdirSync(DECISIONS_DIR)
    .filter((f) => f.endsWith('.md'))
    .sort();

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  for (const f of decisionFiles()) {
    const path = join(DECISIONS_DIR, f);
    writeFileSync(path, withContents(readFileSync(path, 'utf8')));
  }
  console.log('docs/decisions/: contents lists written');
}
