import { z } from 'zod';
import { READER_ID } from '../../src/content/post-title.js';
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

const READER_RULE = 'must be 1 to 128 letters, digits, ".", "_", ":" or "-"';

/** One post's read: the site's own id of the reader, when it passes one (a post-title experiment shows the reader its title). */
export const PostQuery = z.object({
  reader: z
    .string({ error: READER_RULE })
    .regex(READER_ID, READER_RULE)
    .optional()
    .meta({
      description:
        "The site's own opaque id of the visitor reading the post. While a title experiment runs on the post, the reader's " +
        'title and tracked links (answered `no-store`); otherwise ignored. Never stored: a keyed hash of it is',
    }),
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
