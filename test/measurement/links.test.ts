import { describe, expect } from 'vitest';
import { LINK_CODE, trackHtmlLinks, trackTextLinks, type LinkSource } from '../../src/measurement/links.js';
import { newId } from '../../src/ids.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { rows, row } from '../helpers/rows.js';

// Rewriting the links of a mail body (text) and of a post (sanitised HTML) into tracked links.

const BASE = 'https://agent.example.test';

async function source(env: TestEnv, overrides: Partial<LinkSource> = {}): Promise<LinkSource> {
  const { accountId } = await env.tenant();
  return { accountId, channel: 'email', sourceType: 'send', sourceId: newId('send'), cardId: null, leadId: null, ...overrides };
}

const CODE_URL = /https:\/\/agent\.example\.test\/l\/([0-9A-Za-z]{12})/g;
const codesIn = (s: string) => [...s.matchAll(CODE_URL)].map((m) => m[1]!);

async function destination(env: TestEnv, code: string): Promise<string> {
  const link = await rows(env, 'tracked_links', { code }).first('url');
  return link.url;
}

describe('trackTextLinks', () => {
  it('wraps each URL and keeps the sentence punctuation after it outside the link', async ({ env }) => {
    const src = await source(env);
    const out = await trackTextLinks(env.deps.db, BASE, src, 'See https://acme.test/pricing. Or https://acme.test/docs?x=1&y=2, then go!');
    const codes = codesIn(out);
    expect(codes).toHaveLength(2);
    expect(out).toMatch(/^See https:\/\/agent\.example\.test\/l\/\w{12}\. Or https:\/\/agent\.example\.test\/l\/\w{12}, then go!$/);
    expect(await destination(env, codes[0]!)).toBe('https://acme.test/pricing');
    expect(await destination(env, codes[1]!)).toBe('https://acme.test/docs?x=1&y=2');
  });

  it('keeps parentheses that belong to the URL and drops the one that closes a remark', async ({ env }) => {
    const src = await source(env);
    const out = await trackTextLinks(
      env.deps.db,
      BASE,
      src,
      'Read https://en.wikipedia.org/wiki/Foo_(bar) (or see https://acme.test/a). Markdown: [x](https://acme.test/b)',
    );
    const codes = codesIn(out);
    expect(codes).toHaveLength(3);
    expect(await destination(env, codes[0]!)).toBe('https://en.wikipedia.org/wiki/Foo_(bar)');
    expect(await destination(env, codes[1]!)).toBe('https://acme.test/a');
    expect(await destination(env, codes[2]!)).toBe('https://acme.test/b');
    expect(out).toContain(`(or see ${BASE}/l/${codes[1]}).`);
    expect(out).toContain(`[x](${BASE}/l/${codes[2]})`);
  });

  it('leaves our own URLs, unparseable ones and text without links untouched', async ({ env }) => {
    const src = await source(env);
    const text = `Unsubscribe: ${BASE}/u/abc. Already tracked: ${BASE}/l/AAAAAAAAAAAA and ${BASE}?x=1. Broken: https://. Mail me.`;
    expect(await trackTextLinks(env.deps.db, BASE, src, text)).toBe(text);
    expect(await trackTextLinks(env.deps.db, BASE, src, 'no links here')).toBe('no links here');
    expect(await rows(env, 'tracked_links', { source_id: src.sourceId })).toHaveLength(0);
  });

  it('gives the same destination in the same source one code, again on a repeat; another source gets its own', async ({ env }) => {
    const src = await source(env, { leadId: 'lead_x', cardId: 'card_y' });
    const text = 'Go to https://acme.test/x and again https://acme.test/x.';
    const first = await trackTextLinks(env.deps.db, BASE, src, text);
    const again = await trackTextLinks(env.deps.db, BASE, src, text);
    expect(again).toBe(first);
    expect(new Set(codesIn(first)).size).toBe(1);
    for (const code of codesIn(first)) expect(code).toMatch(LINK_CODE);
    const link = await row(env, 'tracked_links', { source_id: src.sourceId });
    expect(link).toMatchObject({ channel: 'email', source_type: 'send', lead_id: 'lead_x', card_id: 'card_y', account_id: src.accountId });
    const other = await trackTextLinks(env.deps.db, BASE, { ...src, sourceId: newId('send') }, text);
    expect(codesIn(other)[0]).not.toBe(codesIn(first)[0]);
  });

  it('leaves a URL over 2,048 characters as it is', async ({ env }) => {
    const src = await source(env);
    const long = `https://acme.test/${'a'.repeat(2_100)}`;
    expect(await trackTextLinks(env.deps.db, BASE, src, `x ${long} y`)).toBe(`x ${long} y`);
  });
});

describe('trackHtmlLinks', () => {
  it('rewrites href attributes (entities decoded for the destination), not data-href, text or our own links', async ({ env }) => {
    const src = await source(env, { channel: 'seo', sourceType: 'post', sourceId: newId('post') });
    const html =
      '<p><a href="https://acme.test/q?a=1&amp;b=2">one</a> <a class="x" href="https://acme.test/r">two</a> ' +
      `<a data-href="https://acme.test/s">three</a> <a href="${BASE}/l/AAAAAAAAAAAA">ours</a> https://acme.test/t</p>`;
    const out = await trackHtmlLinks(env.deps.db, BASE, src, html);
    const codes = codesIn(out);
    expect(codes).toHaveLength(3);
    expect(await destination(env, codes[0]!)).toBe('https://acme.test/q?a=1&b=2');
    expect(await destination(env, codes[1]!)).toBe('https://acme.test/r');
    expect(codes[2]).toBe('AAAAAAAAAAAA');
    expect(out).toContain('<a data-href="https://acme.test/s">three</a>');
    expect(out).toContain(' https://acme.test/t</p>');
    expect(out).toContain(`<a class="x" href="${BASE}/l/${codes[1]}">two</a>`);
    expect(await trackHtmlLinks(env.deps.db, BASE, src, html)).toBe(out);
  });
});
