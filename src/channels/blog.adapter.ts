import type { Config } from '../config.js';
import { applyPublication, AUTHOR_MAX, cleanTags, publicationOf, reservePost, type PublicationOp } from '../content/publish.js';
import { postCache } from '../content/post-cache.js';
import { listenUrl, type Db, type Trx } from '../db.js';
import { AnswerLost, NotShipped, textOf, type ChannelAdapter, type Work } from './channel.types.js';

const OPS: readonly string[] = ['publish', 'update', 'unpublish'] satisfies PublicationOp[];

/**
 * `blog_post`: publishes into our own Content API (src/content/). The card's draft is `{ subject: title,
 * body: markdown }` as the ship tool writes it (or `{ title, markdown }`); `excerpt`, `tags`, `author`,
 * `slug` and `op` ('publish', the default, or 'unpublish') sit at the top of the payload. `prepare`
 * reserves the post in the fence's transaction (fixing its slug); `ship` applies the publication once
 * per idempotency key, in one transaction, so a re-ship after a lost answer changes nothing.
 */
export const blogAdapter = (config: Config, db: Db): ChannelAdapter => ({
  kind: 'blog_post',
  channel: 'seo',
  service: 'the Content API',
  noun: 'post',
  canReship: true,
  needsRecipient: false,
  // Our own database: an answer is quick or the database is down.
  timings: { retryAfterSeconds: 2, reconcileDelayMs: 1_000, reconcileWindowMs: 10 * 60_000, sendTimeoutMs: 10_000 },
  workOf(card, body): Work {
    const p = card.payload;
    const d = (p.draft && typeof p.draft === 'object' ? p.draft : {}) as Record<string, unknown>;
    const excerpt = textOf(p.excerpt).trim();
    return {
      kind: 'blog_post',
      to: null,
      subject: (textOf(d.subject) || textOf(d.title) || card.title).trim(),
      body: body ?? (textOf(d.body) || textOf(d.markdown)),
      details: {
        ...(excerpt ? { excerpt } : {}),
        // Left out, an update keeps the post's own.
        ...(Array.isArray(p.tags) ? { tags: cleanTags(p.tags) } : {}),
        ...(typeof p.author === 'string' ? { author: p.author.trim().slice(0, AUTHOR_MAX) } : {}),
        ...(textOf(p.slug).trim() ? { slug: textOf(p.slug).trim() } : {}),
        op: p.op === 'unpublish' ? 'unpublish' : 'publish',
      },
    };
  },
  async prepare(trx, fencing, work) {
    const r = await reservePost(trx, {
      accountId: fencing.accountId,
      cardId: fencing.cardId,
      title: work.subject,
      slug: textOf(work.details.slug) || null,
      unpublish: work.details.op === 'unpublish',
      hasBody: work.body.trim() !== '',
      at: fencing.at,
    });
    return { details: { accountId: fencing.accountId, cardId: fencing.cardId, postId: r.postId, slug: r.slug, op: r.op } };
  },
  async ship(work, key) {
    const d = work.details;
    const op = textOf(d.op);
    if (!textOf(d.postId) || !textOf(d.accountId) || !OPS.includes(op)) throw new NotShipped('the fence names no post', true);
    let trx: Trx;
    let postId: string;
    try {
      trx = await db.transaction();
    } catch (err) {
      throw new NotShipped((err as Error).message);
    }
    try {
      ({ postId } = await applyPublication(trx, config.baseUrl, {
        key,
        accountId: textOf(d.accountId),
        cardId: textOf(d.cardId),
        postId: textOf(d.postId),
        op: op as PublicationOp,
        title: work.subject,
        markdown: work.body,
        excerpt: textOf(d.excerpt) || null,
        tags: Array.isArray(d.tags) ? cleanTags(d.tags) : null,
        author: typeof d.author === 'string' ? d.author : null,
      }));
    } catch (err) {
      await trx.rollback().catch(() => undefined);
      throw new NotShipped((err as Error).message);
    }
    try {
      await trx.commit();
    } catch (err) {
      // The commit may have landed: only the publication row can tell (lookup).
      throw new AnswerLost((err as Error).message);
    }
    // This process forgets at once; the others as the commit's notification reaches them.
    postCache(listenUrl(config)).changed(textOf(d.accountId));
    return { providerId: postId };
  },
  async lookup(key) {
    const postId = await publicationOf(db, key);
    return postId ? { state: 'sent', providerId: postId } : { state: 'not_found' };
  },
});
