import { describe, expect, it } from 'vitest';
import { EXCERPT_MAX, excerptOf, renderMarkdown } from '../../src/content/render.js';
import { SLUG, SLUG_MAX, slugify } from '../../src/content/slug.js';

describe('slugify', () => {
  it('makes lowercase ascii words joined by dashes, at most 80 characters, cut on a word', () => {
    expect(slugify('How Freight Brokers Cut Quote Time by 80%')).toBe('how-freight-brokers-cut-quote-time-by-80');
    expect(slugify('Café & Crème: Déjà vu!')).toBe('cafe-and-creme-deja-vu');
    expect(slugify('  --  ')).toBe('post');
    expect(slugify('日本語')).toBe('post');
    const long = slugify('word '.repeat(40));
    expect(long.length).toBeLessThanOrEqual(SLUG_MAX);
    expect(long).toMatch(SLUG);
    expect(long.endsWith('word')).toBe(true);
    expect(slugify('x'.repeat(200))).toBe('x'.repeat(SLUG_MAX));
  });
});

describe('renderMarkdown', () => {
  it('keeps blog markup and drops what is not allowed', () => {
    expect(renderMarkdown('# Title\n\n*em* **strong** `code`\n\n> quote\n\n- a\n- b\n\n```\npre\n```')).toBe(
      '<h1>Title</h1>\n<p><em>em</em> <strong>strong</strong> <code>code</code></p>\n<blockquote>\n<p>quote</p>\n</blockquote>\n' +
        '<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n<pre><code>pre\n</code></pre>',
    );
    expect(renderMarkdown('[x](javascript:alert(1)) [y](vbscript:x) ![z](http://a.test/z.png)')).toBe(
      '<p>[x](javascript:alert(1)) [y](vbscript:x) <img src="http://a.test/z.png" alt="z" /></p>',
    );
    expect(renderMarkdown('<img src=x onerror=alert(1)><iframe src="https://a.test"></iframe>')).toBe(
      '<p>&lt;img src=x onerror=alert(1)&gt;&lt;iframe src="<a href="https://a.test">https://a.test</a>"&gt;&lt;/iframe&gt;</p>',
    );
  });
});

describe('excerptOf', () => {
  it("is the first paragraph's text, headings skipped, cut at 300 characters on a word", () => {
    expect(excerptOf('## Heading\n\nFirst **bold** [link](https://a.test)\nline two.\n\nSecond.')).toBe('First bold link line two.');
    expect(excerptOf('## Only a heading')).toBe('');
    const long = excerptOf('lorem '.repeat(100));
    expect(long.length).toBeLessThanOrEqual(EXCERPT_MAX);
    expect(long.endsWith('lorem…')).toBe(true);
  });
});
