import { z } from 'zod';
import { TAG_MAX } from '../../src/content/publish.js';
import { queryInt } from '../schemas.js';

export const PostsQuery = z.object({
  limit: queryInt(1, 100, 20),
  cursor: z.string().optional(),
  tag: z
    .string({ error: 'must be one tag' })
    .min(1, 'must not be empty')
    .max(TAG_MAX, `must be at most ${TAG_MAX} characters`)
    .optional()
    .meta({ description: 'Only posts with exactly this tag' }),
  updatedSince: z
    .string({ error: 'must be an integer (epoch milliseconds)' })
    .regex(/^\d{1,16}$/, 'must be an integer (epoch milliseconds)')
    .transform(Number)
    .optional()
    .meta({ type: 'integer', minimum: 0, description: 'Only posts whose updatedAt is at or after this time, epoch milliseconds' }),
});

/** Any non-empty slug: an unknown one is a 404, never a 400. */
export const SlugParams = z.object({ slug: z.string().min(1) });

export const ContentPost = z
  .object({
    slug: z.string(),
    title: z.string(),
    excerpt: z.string(),
    markdown: z.string().meta({ description: 'The body as written (Markdown)' }),
    html: z.string().meta({ description: 'The body rendered and sanitised; its links are tracked links' }),
    tags: z.array(z.string()),
    author: z.string().nullable(),
    publishedAt: z.number().int().meta({ description: 'First published, epoch milliseconds; kept by later updates' }),
    updatedAt: z.number().int(),
    url: z.string().nullable().meta({ description: "Canonical URL: the account's blog base URL and the slug; null without one" }),
  })
  .strict()
  .meta({ id: 'ContentPost' });

export const ContentPostsPage = z
  .object({ posts: z.array(ContentPost), nextCursor: z.string().nullable() })
  .strict()
  .meta({ id: 'ContentPostsPage' });
export const ContentPostResponse = z.object({ post: ContentPost }).strict().meta({ id: 'ContentPostResponse' });

/** Feed and sitemap: XML text. */
export const XmlText = z.string().regex(/^<\?xml /, 'must be an XML document');
