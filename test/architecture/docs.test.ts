import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';
import { DECISIONS_DIR, decisionFiles, headingsOf, withContents } from '../../scripts/decisions-contents.js';

/**
 * The docs a newcomer reads hold together: every relative link of README.md and docs/**\/*.md names a file
 * of the repository (and its `#anchor` a heading there), no file in docs/ is over 600 lines, and no doc or
 * source file names a tracker issue by number, which a reader outside the tracker cannot follow.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const MAX_DOC_LINES = 600;
const SOURCE_FOLDERS = ['src/', 'api/', 'workers/', 'bin/', 'test/', 'bench/', 'scripts/', 'docs/'];

const tracked = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
  .split('\0')
  .filter((f) => f && existsSync(join(ROOT, f)));
const docs = tracked.filter((f) => f === 'README.md' || (f.startsWith('docs/') && f.endsWith('.md')));
const md = new MarkdownIt({ html: true });

/** The anchors of a markdown text's headings, as GitHub makes them. */
const anchorsOf = (markdown: string) => new Set(headingsOf(markdown).map((h) => h.anchor));

/** The relative links of a markdown text (not inside code), as written. */
function linksOf(markdown: string): string[] {
  const hrefs: string[] = [];
  const walk = (tokens: ReturnType<typeof md.parse>) => {
    for (const t of tokens) {
      if (t.type === 'link_open') hrefs.push(String(t.attrGet('href') ?? ''));
      if (t.children) walk(t.children);
    }
  };
  walk(md.parse(markdown, {}));
  return hrefs.filter((h) => !/^[a-z][a-z0-9+.-]*:/i.test(h));
}

/** The broken links of one file (repository-relative), each as `file: link (why)`. */
function brokenLinks(file: string, markdown: string, read = (f: string) => readFileSync(join(ROOT, f), 'utf8')): string[] {
  const out: string[] = [];
  for (const link of linksOf(markdown)) {
    const [path = '', anchor] = link.split('#', 2);
    const target = path ? relative(ROOT, resolve(ROOT, dirname(file), decodeURIComponent(path))) : file;
    if (target.startsWith('..')) out.push(`${file}: ${link} (outside the repository)`);
    else if (path && !existsSync(join(ROOT, target))) out.push(`${file}: ${link} (no such file)`);
    else if (anchor && target.endsWith('.md') && !anchorsOf(read(target)).has(anchor)) out.push(`${file}: ${link} (no such heading)`);
  }
  return out;
}

/** The word issue (or issues) followed by a number: a tracker's number, wherever it is. */
const ISSUE = /\bissues? #?\d+/i;

describe('docs', () => {
  it('link only to files of the repository, and to headings that exist', () => {
    expect(docs).toContain('README.md');
    expect(docs.flatMap((f) => brokenLinks(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('a broken link, an anchor with no heading and a link outside the repository are caught', () => {
    const text = '# Top\n\n[a](missing.md) [b](../README.md#no-such-heading) [c](../../elsewhere.md) [d](#top) [e](agent.md)';
    expect(brokenLinks('docs/x.md', text, (f) => (f === 'docs/x.md' ? text : '# Readme'))).toEqual([
      'docs/x.md: missing.md (no such file)',
      'docs/x.md: ../README.md#no-such-heading (no such heading)',
      'docs/x.md: ../../elsewhere.md (outside the repository)',
    ]);
    expect(anchorsOf('# A `b` (c), d.e\n\n## Tests\n\n## Tests')).toEqual(new Set(['a-b-c-de', 'tests', 'tests-1']));
  });

  it('of decisions each open with a contents list of their headings (`npx tsx scripts/decisions-contents.ts` writes them)', () => {
    expect(decisionFiles().length).toBeGreaterThan(10);
    const stale = decisionFiles().filter((f) => {
      const text = readFileSync(join(DECISIONS_DIR, f), 'utf8');
      return withContents(text) !== text;
    });
    expect(stale).toEqual([]);
    const file = '# T\n\n<!-- contents -->\n<!-- /contents -->\n\n## A `b`\n\n### C\n\n## A `b`\n';
    expect(withContents(file)).toContain('- [A `b`](#a-b)\n  - [C](#c)\n- [A `b`](#a-b-1)\n');
  });

  it(`are at most ${MAX_DOC_LINES} lines a file`, () => {
    const long = docs
      .filter((f) => f.startsWith('docs/'))
      .map((f) => [f, readFileSync(join(ROOT, f), 'utf8').replace(/\n$/, '').split('\n').length] as const)
      .filter(([, n]) => n > MAX_DOC_LINES)
      .map(([f, n]) => `${f} (${n} lines)`);
    expect(long).toEqual([]);
  });

  it('and the source name no tracker issue by number', () => {
    const files = tracked.filter((f) => f === 'README.md' || SOURCE_FOLDERS.some((d) => f.startsWith(d)));
    const hits = files.flatMap((f) =>
      readFileSync(join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (ISSUE.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(files.length).toBeGreaterThan(100);
    expect(hits).toEqual([]);
    const word = 'issue';
    expect([`see ${word} 30`, `(${word} 14, items 6 and 7)`, `${word}s 3 and 4`, `${word} #31`].every((s) => ISSUE.test(s))).toBe(true);
    expect(ISSUE.test('the first zod issue')).toBe(false);
  });
});
