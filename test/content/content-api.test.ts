import { describe, expect } from 'vitest';
import { CONTENT_CACHE_CONTROL } from '../../api/routes/content.js';
import { adminCall } from '../helpers/env.js';
import { it } from '../helpers/fixture.js';
import { auth, published, siteToken } from './helpers.js';
import { row, rows } from '../helpers/rows.js';

const slugsOf = (body: { posts: { slug: string }[] }) => body.posts.map((p) => p.slug);

describe('GET /api/v1/content/posts', () => {
  it('pages newest published first with a signed cursor, filtered by tag and updatedSince', async ({ env }) => {
    const t = await env.tenant();
    for (let i = 1; i <= 5; i++) await published(env, t, { title: `Post ${i}`, tags: i % 2 ? ['odd'] : ['even'] });
    const site = await siteToken(env, t.accountId);
    const get = (q: Record<string, string>) => env.api().get('/api/v1/content/posts').query(q).set(auth(site));

    const first = await get({ limit: '2' });
    expect(slugsOf(first.body)).toEqual(['post-5', 'post-4']);
    const second = await get({ limit: '2', cursor: first.body.nextCursor });
    expect(slugsOf(second.body)).toEqual(['post-3', 'post-2']);
    const third = await get({ limit: '2', cursor: second.body.nextCursor });
    expect(slugsOf(third.body)).toEqual(['post-1']);
    expect(third.body.nextCursor).toBeNull();

    const odd = await get({ tag: 'odd', limit: '1' });
    expect(slugsOf(odd.body)).toEqual(['post-5']);
    const oddNext = await get({ tag: 'odd', limit: '2', cursor: odd.body.nextCursor });
    expect(slugsOf(oddNext.body)).toEqual(['post-3', 'post-1']);
    // A cursor is signed with its filters: it does not carry over to another filter.
    const crossed = await get({ tag: 'even', cursor: odd.body.nextCursor });
    expect(crossed.status).toBe(400);
    expect(crossed.body).toEqual({ error: 'cursor is not valid' });

    const post3 = await row(env, 'posts', { account_id: t.accountId, slug: 'post-3' });
    const since = await get({ updatedSince: String(post3.updated_at) });
    expect(slugsOf(since.body)).toEqual(['post-5', 'post-4', 'post-3']);
    expect(slugsOf((await get({ tag: 'nope' })).body)).toEqual([]);
  });

  it('answers 400 naming the field for a bad limit, updatedSince or cursor, with no-store', async ({ env }) => {
    const t = await env.tenant(['content:read']);
    const cases: [Record<string, string>, string][] = [
      [{ limit: '0' }, 'limit must be an integer from 1 to 100'],
      [{ limit: '101' }, 'limit must be an integer from 1 to 100'],
      [{ limit: 'ten' }, 'limit must be an integer from 1 to 100'],
      [{ updatedSince: 'yesterday' }, 'updatedSince must be an integer (epoch milliseconds)'],
      [{ updatedSince: '-5' }, 'updatedSince must be an integer (epoch milliseconds)'],
      [{ cursor: 'abc.def' }, 'cursor is not valid'],
      [{ tag: '' }, 'tag must not be empty'],
    ];
    for (const [query, error] of cases) {
      const res = await env.api().get('/api/v1/content/posts').query(query).set(auth(t.token));
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body).toEqual({ error });
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const twoTags = await env.api().get('/api/v1/content/posts?tag=a&tag=b').set(auth(t.token));
    expect(twoTags.status).toBe(400);
    expect(twoTags.body.error).toMatch(/^tag /);
  });
});

describe('caching', () => {
  it('sends a strong ETag with private caching; a matching If-None-Match (one of a list, or *) is 304 with no body', async ({ env }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Cache me' });
    const site = await siteToken(env, t.accountId);
    for (const path of [`/api/v1/content/posts/${slug}`, '/api/v1/content/posts', '/api/v1/content/feed.xml']) {
      const res = await env.api().get(path).set(auth(site));
      expect(res.status).toBe(200);
      const etag = res.headers.etag as string;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      expect(res.headers['cache-control']).toBe(CONTENT_CACHE_CONTROL);
      expect(res.headers.vary).toBe('Authorization');
      for (const header of [etag, `"other", ${etag}`, '*', `W/${etag}`]) {
        const again = await env.api().get(path).set(auth(site)).set('If-None-Match', header);
        expect(again.status, header).toBe(304);
        expect(again.text ?? '').toBe('');
        expect(again.headers.etag).toBe(etag);
        expect(again.headers['cache-control']).toBe(CONTENT_CACHE_CONTROL);
        expect(again.headers.vary).toBe('Authorization');
      }
      const stale = await env.api().get(path).set(auth(site)).set('If-None-Match', '"stale"');
      expect(stale.status).toBe(200);
    }
  });

  it("keeps errors no-store: 404 for an unknown, pending or other account's slug, 401 without a token", async ({ env }) => {
    const t = await env.tenant();
    const other = await env.tenant();
    const { slug } = await published(env, other, { title: 'Not yours' });
    await env.deps.db('posts').insert({
      id: 'post_pending1',
      account_id: t.accountId,
      slug: 'reserved',
      status: 'pending',
      updated_at: 1,
      created_at: 1,
    });
    for (const s of ['no-such-post', slug, 'reserved']) {
      const res = await env.api().get(`/api/v1/content/posts/${s}`).set(auth(t.token));
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'not found' });
      expect(res.headers['cache-control']).toBe('no-store');
      expect(res.headers.etag).toBeUndefined();
    }
    const anon = await env.api().get('/api/v1/content/posts');
    expect(anon.status).toBe(401);
    expect(anon.headers['cache-control']).toBe('no-store');
  });
});

describe('post HTML', () => {
  it('strips scripts, event handlers and javascript: links, and makes links tracked links (channel seo)', async ({ env }) => {
    const t = await env.tenant();
    const markdown = [
      'Read [our guide](https://example.com/guide?a=1&b=2) or <script>alert(1)</script> this.',
      '',
      '<a href="https://evil.test" onclick="steal()">raw</a> and [bad](javascript:alert(1)) and ![img](data:image/png;base64,AAAA)',
      '',
      '![chart](https://cdn.example.com/chart.png "Chart")',
      '',
      'Visit https://example.org/plain too.',
    ].join('\n');
    const { card, slug } = await published(env, t, { title: 'Links and dangers', markdown });
    const post = (await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token))).body.post;
    expect(post.markdown).toBe(markdown);
    const html: string = post.html;
    // Raw HTML in the markdown is shown as text; nothing executable survives as markup.
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<[^>]*\son\w+=/i);
    expect(html).not.toMatch(/(href|src)="(javascript|data):/i);
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('<img alt="img" />');
    expect(html).toContain('<img src="https://cdn.example.com/chart.png" alt="chart" title="Chart" />');
    const links = await rows(env, 'tracked_links', { account_id: t.accountId }).orderBy('url');
    expect(links.map((l) => [l.url, l.channel, l.source_type, l.card_id])).toEqual([
      ['https://evil.test', 'seo', 'post', card.id],
      ['https://example.com/guide?a=1&b=2', 'seo', 'post', card.id],
      ['https://example.org/plain', 'seo', 'post', card.id],
    ]);
    const postRow = await row(env, 'posts', { account_id: t.accountId, slug });
    for (const l of links) {
      expect(l.source_id).toBe(postRow.id);
      expect(html).toContain(`href="${env.config.baseUrl}/l/${l.code}"`);
    }
    expect(html).not.toContain('example.com/guide');
  });
});

describe('canonical URL, feed and sitemap', () => {
  it('gives posts a url once the account sets its blog base URL (admin CLI), and lists them in the feed and sitemap', async ({ env }) => {
    const t = await env.tenant();
    const { slug } = await published(env, t, { title: 'Feed <me> & "you"', tags: ['a&b'], author: 'Sam' });
    const before = await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token));
    expect(before.body.post.url).toBeNull();
    const emptyMap = await env.api().get('/api/v1/content/sitemap.xml').set(auth(t.token));
    expect(emptyMap.text).not.toContain('<url>');

    const set = await adminCall(env, ['content', 'site-url', '--account', t.accountId, '--url', 'https://acme.test/blog']);
    expect(set.out).toEqual({ accountId: t.accountId, blogBaseUrl: 'https://acme.test/blog/' });
    const after = await env.api().get(`/api/v1/content/posts/${slug}`).set(auth(t.token));
    expect(after.body.post.url).toBe(`https://acme.test/blog/${slug}`);

    const feed = await env.api().get('/api/v1/content/feed.xml').set(auth(t.token));
    expect(feed.status).toBe(200);
    expect(feed.headers['content-type']).toBe('application/atom+xml; charset=utf-8');
    const xml = feed.text;
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="utf-8"\?>\n<feed xmlns="http:\/\/www.w3.org\/2005\/Atom">/);
    expect(xml).toContain('<title>Feed &lt;me&gt; &amp; &quot;you&quot;</title>');
    expect(xml).toContain(`<link rel="alternate" type="text/html" href="https://acme.test/blog/${slug}"/>`);
    expect(xml).toContain('<category term="a&amp;b"/>');
    expect(xml).toContain('<content type="html">&lt;p&gt;');
    expect(wellFormed(xml)).toBe(true);
    expect(xml.match(/<entry>/g)).toHaveLength(1);

    const map = await env.api().get('/api/v1/content/sitemap.xml').set(auth(t.token));
    expect(map.headers['content-type']).toBe('application/xml; charset=utf-8');
    expect(map.text).toContain(`<url><loc>https://acme.test/blog/${slug}</loc><lastmod>`);
    expect(wellFormed(map.text)).toBe(true);
  });
});

/** Tags open and close in order, and no bare `&` or `<` sits in text (no XML parser is installed). */
function wellFormed(xml: string): boolean {
  const body = xml.replace(/^<\?xml[^>]*\?>\n/, '');
  if (/&(?!(amp|lt|gt|quot|apos);)/.test(body)) return false;
  const stack: string[] = [];
  for (const m of body.matchAll(/<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"<]*")*)\s*(\/?)>|</g)) {
    if (!m[2]) return false;
    if (m[4]) continue;
    if (m[1]) {
      if (stack.pop() !== m[2]) return false;
    } else stack.push(m[2]);
  }
  return stack.length === 0;
}

describe('/openapi.json', () => {
  it('documents the content routes: JSON pages, 304 without a body, the feed as Atom text', async ({ env }) => {
    const { body } = await env.api().get('/openapi.json');
    const list = body.paths['/api/v1/content/posts'].get;
    expect(list.operationId).toBe('listContentPosts');
    expect(list['x-required-scope']).toBe('content:read');
    expect(list.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ContentPostsPage' });
    // A 304 has no body; it and the 200 name the cache headers, and If-None-Match is a header parameter.
    expect(list.responses['304'].content).toBeUndefined();
    expect(list.responses['304'].description).toMatch(/^Not modified/);
    for (const status of ['200', '304']) expect(Object.keys(list.responses[status].headers)).toEqual(['ETag', 'Cache-Control', 'Vary']);
    const names = list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort();
    expect(names).toEqual(['header:If-None-Match', 'query:cursor', 'query:limit', 'query:tag', 'query:updatedSince']);
    expect(body.paths['/api/v1/content/posts/{slug}'].get.operationId).toBe('getContentPost');
    const feed = body.paths['/api/v1/content/feed.xml'].get;
    expect(Object.keys(feed.responses['200'].content)).toEqual(['application/atom+xml']);
    expect(Object.keys(feed.responses['404'] ?? {})).toEqual([]);
    expect(body.components.schemas.ContentPost.required).toEqual(
      expect.arrayContaining(['slug', 'title', 'excerpt', 'markdown', 'html', 'tags', 'publishedAt', 'updatedAt', 'url']),
    );
  });
});
