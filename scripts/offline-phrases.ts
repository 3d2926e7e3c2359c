import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OFFLINE_OTHERWISE, OFFLINE_PHRASES } from '../src/agent/brains/offline/offline-phrases.js';

/**
 * docs/agent.md's list of the phrases the offline brain understands, written from the code that declares
 * them (src/agent/brains/offline/offline-phrases.ts). Run `npx tsx scripts/offline-phrases.ts` after changing a phrase;
 * test/agent/offline-phrases-doc.test.ts fails while the list in the docs differs from the code.
 */
export const AGENT_DOC = join(import.meta.dirname, '..', 'docs', 'agent.md');
const START = '<!-- offline-phrases:start (written by scripts/offline-phrases.ts from src/agent/brains/offline/offline-phrases.ts) -->';
const END = '<!-- offline-phrases:end -->';

/** The list: one bullet per phrase, its other spellings beside it, then what it does. */
export function phraseList(): string {
  const bullet = (written: readonly string[], does: string) => `- ${written.map((w) => `\`${w}\``).join(' or ')}: ${does}.`;
  return [
    ...OFFLINE_PHRASES.map((p) => bullet([p.example, ...(p.variants ?? [])], p.does)),
    bullet([OFFLINE_OTHERWISE.example], OFFLINE_OTHERWISE.does),
  ].join('\n');
}

/** The markdown with its marked block replaced by the list; throws when the markers are missing. */
export function withPhraseList(markdown: string): string {
  const start = markdown.indexOf(START);
  const end = markdown.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/agent.md needs the lines ${START} and ${END}`);
  return `${markdown.slice(0, start + START.length)}\n\n${phraseList()}\n\n${markdown.slice(end)}`;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  writeFileSync(AGENT_DOC, withPhraseList(readFileSync(AGENT_DOC, 'utf8')));
  console.log('docs/agent.md: the offline brain phrases are written');
}
