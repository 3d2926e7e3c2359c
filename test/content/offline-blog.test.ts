import { describe, expect } from 'vitest';
import { setApproval } from '../../src/review/approval.service.js';
import { cardsRepository } from '../../src/review/cards/cards.repository.js';
import { autoResolve } from '../../src/shipping/after-approval.js';
import { agentOptions, it, type AgentEnv } from '../helpers/fixture.js';
import { approve, auth, siteToken } from './helpers.js';
import { row, rows } from '../helpers/rows.js';

it.override('options', agentOptions());

const say = (env: AgentEnv, token: string, text: string) => env.say(token, text);

describe('the offline brain and blog posts', () => {
  it('drafts "write a blog post about TOPIC linking to URL" as a waiting blog_post card that publishes with the link tracked', async ({
    agent: env,
  }) => {
    const t = await env.tenant();
    const m = await say(env, t.token, 'Write a blog post about freight quote automation, linking to https://acme.test/demo');
    const [card] = await cardsRepository(env.deps.db).listWaiting(t.accountId, 10);
    expect(card).toMatchObject({ sourceType: 'blog_post', status: 'pending', kindOfWork: 'blog_post' });
    expect(m.replies.map((r) => r.text)).toEqual([
      `I drafted a blog post about freight quote automation. It is waiting in your review queue as card ${card!.id}; ` +
        'nothing is published until you approve it.',
    ]);
    const draft = card!.payload.draft as { subject: string; body: string };
    expect(draft.subject).toBe('Freight quote automation');
    expect(draft.body.split('\n')[0]).not.toMatch(/^#/);
    expect(draft.body.match(/^## /gm)).toHaveLength(3);
    expect(draft.body).toContain('[Take the next step](https://acme.test/demo)');
    expect(card!.payload).toMatchObject({ work: 'blog_post', tags: ['freight', 'quote', 'automation'] });
    expect(await rows(env, 'posts', { account_id: t.accountId })).toEqual([]);

    expect((await approve(env, t.token, card!.id)).status).toBe(200);
    const site = await siteToken(env, t.accountId);
    const post = (await env.api().get('/api/v1/content/posts/freight-quote-automation').set(auth(site))).body.post;
    expect(post).toMatchObject({ title: 'Freight quote automation', tags: ['freight', 'quote', 'automation'] });
    expect(post.excerpt).toMatch(/^Most teams know freight quote automation matters/);
    const [link] = await rows(env, 'tracked_links', { account_id: t.accountId });
    expect(link).toMatchObject({ url: 'https://acme.test/demo', channel: 'seo', source_type: 'post' });
    expect(post.html).toContain(`<a href="${env.config.baseUrl}/l/${link.code}">Take the next step</a>`);

    const down = await say(env, t.token, 'unpublish the blog post freight-quote-automation');
    const [downCard] = await cardsRepository(env.deps.db).listWaiting(t.accountId, 10);
    expect(downCard!.payload).toMatchObject({ work: 'blog_post', op: 'unpublish', slug: 'freight-quote-automation' });
    expect(down.replies[0]?.text).toMatch(/^I asked to unpublish the blog post freight-quote-automation\. It is waiting/);
    expect((await approve(env, t.token, downCard!.id)).status).toBe(200);
    expect((await env.api().get('/api/v1/content/posts/freight-quote-automation').set(auth(site))).status).toBe(404);
  });

  it('says truthfully that a post ships now where the account lets blog posts run without approval', async ({ agent: env }) => {
    const t = await env.tenant();
    await setApproval(env.deps.db, t.accountId, 'blog_post', false);
    const m = await say(env, t.token, 'write a blog post about onboarding');
    const card = await row(env, 'review_cards', { account_id: t.accountId });
    expect(m.replies[0]?.text).toBe(
      `I drafted a blog post about onboarding. This account lets blog posts run without approval, so card ${card.id} publishes it now.`,
    );
    // The card-timers sweep ships a due card; here its step runs directly.
    expect(await autoResolve(env.deps, t.accountId, card.id, Number(card.auto_resolve_at))).toBe('sent');
    const post = await row(env, 'posts', { account_id: t.accountId });
    expect(post).toMatchObject({ slug: 'onboarding', status: 'published' });
  });

  it('lists the blog phrases in its help and refuses a link that is not http(s)', async ({ agent: env }) => {
    const t = await env.tenant();
    const help = await say(env, t.token, 'hello there');
    expect(help.replies[1]?.text).toContain('"write a blog post about TOPIC" (optionally "… linking to URL")');
    const bad = await say(env, t.token, 'write a blog post about pricing linking to ftp://acme.test/x');
    expect(bad.replies[0]?.text).toBe('ftp://acme.test/x is not an http(s) link, so I drafted nothing.');
  });
});
