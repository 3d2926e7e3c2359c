import { atomFeed, sitemap } from '../../src/content/feed.js';
import { readerPostResponse } from '../../src/content/post-title.js';
import { readerTitle } from '../../src/experiments/variants/post-title-readers.js';
import { etagOf, listPosts, matchesEtag, postResponse } from '../../src/content/posts.service.js';
import { listenUrl } from '../../src/db.js';
import { z } from 'zod';
import { defineRoute, type RouteContext, type RouteDef } from '../route-def.js';
import { ContentPostResponse, ContentPostsPage, PostQuery, PostsQuery, SlugParams, XmlText } from './content.schemas.js';

/**
 * The only cacheable /api responses (docs/decisions/content-and-measurement.md, "Caching: the only
 * cacheable /api responses"): a site's server may keep them a minute and serve a stale copy for ten
 * while it revalidates; private and varying by token, since each account sees its own posts. Errors
 * stay `no-store`.
 */
export const CONTENT_CACHE_CONTROL = 'private, max-age=60, stale-while-revalidate=600';
/** A post as one reader of a title experiment sees it: its title and links are the reader's own, so no cache keeps it. */
export const READER_CACHE_CONTROL = 'private, no-store';

/** What a site's server sends to revalidate, and the cache headers of every 200 and 304 here. */
const Revalidate = z.object({
  'If-None-Match': z
    .string()
    .optional()
    .meta({ description: 'The ETag of the copy the client holds (or a list of them, or `*`): the same bytes answer 304 with no body' }),
});
const CacheHeaders = z.object({
  ETag: z.string().meta({ description: 'Strong validator of the exact bytes of the 200 (quoted SHA-256, base64url)' }),
  'Cache-Control': z
    .string()
    .meta({ description: `\`${CONTENT_CACHE_CONTROL}\`; a reader's own post (\`reader\`): \`${READER_CACHE_CONTROL}\`` }),
  Vary: z.string().meta({ description: '`Authorization`: each token sees its own account' }),
});
const NOT_MODIFIED = { description: 'Not modified: the If-None-Match named the current ETag (no body)', headers: CacheHeaders } as const;
const ATOM = 'application/atom+xml';
const SITEMAP = 'application/xml';

/** The cache headers, and whether the client already holds these exact bytes (answer 304). */
function validated(ctx: RouteContext, bytes: string, known?: string, personal = false) {
  const etag = known ?? etagOf(bytes);
  const headers = { ETag: etag, 'Cache-Control': personal ? READER_CACHE_CONTROL : CONTENT_CACHE_CONTROL, Vary: 'Authorization' };
  return { fresh: matchesEtag(ctx.req.headers['if-none-match'], etag), headers };
}

/** Content API: a website's server reads the account's published posts (scope `content:read`). */
export const contentRoutes: RouteDef[] = [
  defineRoute({
    method: 'get',
    path: '/api/v1/content/posts',
    operationId: 'listContentPosts',
    stateRules: ['cursor is not valid'],
    summary: 'Published posts, newest published first; follow nextCursor until null. Strong ETag; If-None-Match → 304',
    scope: 'content:read',
    bucket: 'reads',
    query: PostsQuery,
    requestHeaders: Revalidate,
    responses: { 200: { description: 'One page of posts', schema: ContentPostsPage, headers: CacheHeaders }, 304: NOT_MODIFIED },
  }).handle(async ({ query }, ctx) => {
    const page = await listPosts(ctx.deps.db, ctx.principal.accountId, {
      tag: query.tag ?? null,
      updatedSince: query.updatedSince ?? null,
      limit: query.limit ?? 20,
      cursor: query.cursor ?? null,
      cursorSecret: await ctx.deps.cursorSecret(),
    });
    const json = JSON.stringify(page);
    const { fresh, headers } = validated(ctx, json);
    return fresh ? { status: 304, headers } : { json, headers };
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/content/posts/{slug}',
    operationId: 'getContentPost',
    summary: 'One published post by slug (for a reader, when `reader` is given). Strong ETag; If-None-Match → 304',
    scope: 'content:read',
    bucket: 'reads',
    params: SlugParams,
    query: PostQuery,
    requestHeaders: Revalidate,
    responses: { 200: { description: 'The post', schema: ContentPostResponse, headers: CacheHeaders }, 304: NOT_MODIFIED },
  }).handle(async ({ params, query }, ctx) => {
    const { db, config } = ctx.deps;
    const where = { listenUrl: listenUrl(config), baseUrl: config.baseUrl, readerTitle };
    const { json, etag, personal } = query.reader
      ? await readerPostResponse(db, where, ctx.principal.accountId, params.slug, query.reader)
      : { ...(await postResponse(db, where.listenUrl, ctx.principal.accountId, params.slug)), personal: false };
    const { fresh, headers } = validated(ctx, json, etag, personal);
    return fresh ? { status: 304, headers } : { json, headers };
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/content/feed.xml',
    operationId: 'getContentFeed',
    summary: 'Atom feed of the latest 20 published posts',
    scope: 'content:read',
    bucket: 'reads',
    requestHeaders: Revalidate,
    responses: {
      200: { description: 'Atom feed (RFC 4287)', schema: XmlText, contentType: ATOM, headers: CacheHeaders },
      304: NOT_MODIFIED,
    },
  }).handle(async (_input, ctx) => {
    const self = `${ctx.deps.config.baseUrl}/api/v1/content/feed.xml`;
    const text = await atomFeed(ctx.deps.db, ctx.principal.accountId, ctx.principal.accountName, self);
    const { fresh, headers } = validated(ctx, text);
    return fresh ? { status: 304, headers } : { text, headers };
  }),
  defineRoute({
    method: 'get',
    path: '/api/v1/content/sitemap.xml',
    operationId: 'getContentSitemap',
    summary: "Sitemap <urlset> of the published posts' canonical URLs (empty without a blog base URL)",
    scope: 'content:read',
    bucket: 'reads',
    requestHeaders: Revalidate,
    responses: {
      200: { description: 'Sitemap (sitemaps.org 0.9)', schema: XmlText, contentType: SITEMAP, headers: CacheHeaders },
      304: NOT_MODIFIED,
    },
  }).handle(async (_input, ctx) => {
    const text = await sitemap(ctx.deps.db, ctx.principal.accountId);
    const { fresh, headers } = validated(ctx, text);
    return fresh ? { status: 304, headers } : { text, headers };
  }),
];
