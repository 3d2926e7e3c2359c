import { agentDoors } from '../../workers/agent-turns.js';
import { describe, expect } from 'vitest';
import { CONTENT_CACHE_CONTROL, READER_CACHE_CONTROL } from '../../api/routes/content.js';
import { ResultsResponse } from '../../api/routes/results.schemas.js';
import { draftExperimentMail, lookAtExperiment } from '../../src/experiments/experiments.service.js';
import { executeTool } from '../../src/agent/tools/tool.js';
import { experimentsRepository } from '../../src/experiments/experiments.repository.js';
import { postCardId } from '../../src/experiments/variants/post-title.js';
import { sweepCards } from '../../src/shipping/after-approval.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import { approve, auth, siteToken } from '../content/helpers.js';
import { it, type TestEnv } from '../helpers/fixture.js';
import { runFollowUps } from '../helpers/follow-ups.js';
import { rows } from '../helpers/rows.js';

// An experiment on a blog post's title, in-process through the real express app: proposed through the agent's tool,
// started by approving its card (which files ONE blog_post card), the post published by approving that card, read by
// the site's readers through the Content API (each reader one title, written once), clicked through its tracked links
// with the reader's token, looked at on the plan's schedule, and the winner adopted as the post's title for everyone.

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_4) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Safari/605.1.15';
const TITLES = ['Freight quotes in minutes', 'Stop waiting on freight quotes'] as const;
const POST = {
  title: TITLES[0],
  markdown: 'Quoting freight by hand takes days.\n\nSee [the demo](https://www.acme-freight.test/demo) for how.',
  excerpt: 'Quoting freight, faster.',
  tags: ['freight'],
};
/** 20% against 40% of readers clicking: a plan of 153 readers per variant, a look every 50. */
const PROPOSE = {
  thing: 'post_title',
  topic: 'freight quotes',
  post: POST,
  challengers: [TITLES[1]],
  baselineRate: 0.2,
  minimumDetectableEffect: 0.2,
};

const tool = (env: TestEnv, accountId: string, args: Record<string, unknown>) =>
  executeTool(
    { id: 'c1', name: 'propose_experiment', args },
    {
      db: env.deps.db,
      accountId,
      turnId: 'turn_post_title',
      fromOutside: false,
      config: env.config,
      onReply: async () => undefined,
      doors: agentDoors,
    },
  );
const cards = (env: TestEnv, accountId: string, sourceType: string) =>
  rows(env, 'review_cards', { account_id: accountId, source_type: sourceType }).orderBy('created_at');
const assignments = (env: TestEnv, accountId: string, id: string) =>
  rows(env, 'experiment_assignments', { account_id: accountId, experiment_id: id }).orderBy('contact');

describe('an experiment on a blog post title', () => {
  it('publishes once on approval, shows each reader one title, counts person clicks once, decides and adopts', async ({ env }) => {
    const t = await env.tenant();
    const site = await siteToken(env, t.accountId);
    const proposed = await tool(env, t.accountId, PROPOSE);
    expect(proposed).toMatchObject({ ok: true });
    const id = /experiment (exp_\S+)/.exec(proposed.result)![1]!;
    const [card] = await cards(env, t.accountId, 'experiment');
    expect(card.prompt).toContain('Planned sample: 153 readers per variant');
    expect(card.prompt).toContain('one blog post card of this post under the title A, which waits under your blog post approval');

    // Approving the experiment files ONE blog_post card (the maintenance pass files no other); nothing is published yet.
    expect((await approve(env, t.token, card.id)).status).toBe(200);
    await runFollowUps(env.deps);
    const repo = experimentsRepository(env.deps.db);
    const e = (await repo.get(t.accountId, id))!;
    expect(e.status).toBe('running');
    await Promise.all([draftExperimentMail(env.deps.db, e, 10), draftExperimentMail(env.deps.db, e, 10)]);
    const blogCards = await cards(env, t.accountId, 'blog_post');
    expect(blogCards).toHaveLength(1);
    expect(blogCards[0]).toMatchObject({ id: postCardId(t.accountId, id), status: 'pending' });
    expect(blogCards[0].payload).toMatchObject({ experimentId: id, draft: { subject: TITLES[0] }, excerpt: POST.excerpt });
    const list = () => env.api().get('/api/v1/content/posts').set(auth(site));
    expect((await list()).body.posts).toEqual([]);

    expect((await approve(env, t.token, blogCards[0].id)).status).toBe(200);
    await runFollowUps(env.deps);
    const posts = (await list()).body.posts as { slug: string; title: string }[];
    expect(posts.map((p) => p.title)).toEqual([TITLES[0]]);
    expect(await rows(env, 'posts', { account_id: t.accountId })).toHaveLength(1);
    const slug = posts[0]!.slug;
    const read = (reader?: string) =>
      env
        .api()
        .get(`/api/v1/content/posts/${slug}`)
        .query(reader === undefined ? {} : { reader })
        .set(auth(site));

    // Without a reader: the control, cacheable as before, nothing written. A bad reader: 400 naming the field.
    const plain = await read();
    expect(plain.body.post.title).toBe(TITLES[0]);
    expect(plain.headers['cache-control']).toBe(CONTENT_CACHE_CONTROL);
    expect(plain.body.post.html).not.toContain('?x=');
    for (const bad of ['', 'has space', 'x'.repeat(129), 'ü']) {
      const res = await read(bad);
      expect(res.status, bad).toBe(400);
      expect(res.body).toEqual({ error: 'reader must be 1 to 128 letters, digits, ".", "_", ":" or "-"' });
    }
    const two = await env.api().get(`/api/v1/content/posts/${slug}?reader=a&reader=b`).set(auth(site));
    expect(two.status).toBe(400);
    expect(two.body.error).toMatch(/^reader must be /);
    expect(await assignments(env, t.accountId, id)).toHaveLength(0);

    // 200 readers split across the titles; each always sees its own, written once; its links carry its token.
    const seen = new Map<string, { title: string; link: string }>();
    for (let i = 0; i < 200; i += 20) {
      const batch = Array.from({ length: 20 }, (_, j) => `site-visitor.${i + j}`);
      await Promise.all(
        batch.map(async (reader) => {
          const res = await read(reader);
          expect(res.status).toBe(200);
          expect(res.headers['cache-control']).toBe(READER_CACHE_CONTROL);
          const link = /href="(http[^"]+\/l\/[0-9A-Za-z]{12}\?x=[0-9A-Za-z]{16})"/.exec(res.body.post.html)?.[1];
          expect(link).toBeTruthy();
          seen.set(reader, { title: res.body.post.title, link: link! });
        }),
      );
    }
    const byTitle = (title: string) => [...seen.values()].filter((s) => s.title === title).length;
    expect(byTitle(TITLES[0]) + byTitle(TITLES[1])).toBe(200);
    expect(byTitle(TITLES[0])).toBeGreaterThan(60);
    expect(byTitle(TITLES[1])).toBeGreaterThan(60);
    for (const reader of ['site-visitor.3', 'site-visitor.77', 'site-visitor.150']) {
      const again = await read(reader);
      expect(again.body.post.title).toBe(seen.get(reader)!.title);
    }
    const written = await assignments(env, t.accountId, id);
    expect(written).toHaveLength(200);
    expect(written.every((r) => r.contact.startsWith('reader:') && !r.contact.includes('site-visitor'))).toBe(true);
    expect(written.every((r) => r.exposed_at !== null && r.token)).toBe(true);
    await read();
    expect(await assignments(env, t.accountId, id)).toHaveLength(200);
    // List, feed and sitemap keep the control.
    expect((await list()).body.posts.map((p: { title: string }) => p.title)).toEqual([TITLES[0]]);
    const feed = await env.api().get('/api/v1/content/feed.xml').set(auth(site));
    expect(feed.text).toContain(TITLES[0]);
    expect(feed.text).not.toContain(TITLES[1]);

    // Clicks: a person's counts once per reader; a bot's never; an unknown or malformed token changes nothing.
    const click = (link: string, ua = BROWSER) =>
      env
        .api()
        .get(new URL(link).pathname + new URL(link).search)
        .set('User-Agent', ua);
    const readers = [...seen.entries()];
    const a = readers.filter(([, s]) => s.title === TITLES[0]);
    const b = readers.filter(([, s]) => s.title === TITLES[1]);
    const bot = await click(a[0]![1].link, 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)');
    expect(bot.status).toBe(302);
    expect(new URL(bot.headers.location!).searchParams.has('x')).toBe(false);
    for (const [, s] of [...a.slice(1, 16), ...b.slice(0, 60), ...b.slice(0, 5)]) {
      const res = await click(s.link);
      expect(res.status).toBe(302);
      expect(res.headers.location).toMatch(/^https:\/\/www\.acme-freight\.test\/demo\?gvid=vis_/);
    }
    const bare = a[0]![1].link.replace(/\?x=.*$/, '');
    for (const x of ['AAAAAAAAAAAAAAAA', '<script>', 'x'.repeat(500)]) {
      const res = await click(`${bare}?x=${encodeURIComponent(x)}`);
      expect(res.status).toBe(302);
    }
    const clicked = (await assignments(env, t.accountId, id)).filter((r) => r.clicked_at !== null);
    expect(clicked).toHaveLength(75);
    expect(clicked.every((r) => r.click_visit_id?.startsWith('vis_'))).toBe(true);

    // Past the planned 153 per variant, new readers see the control and nothing is written.
    for (let i = 200; i < 420; i++) await read(`site-visitor.${i}`);
    const all = await assignments(env, t.accountId, id);
    expect([0, 1].map((v) => all.filter((r) => r.variant_index === v).length)).toEqual([153, 153]);
    const late = await read('late-reader');
    expect(late.body.post.title).toBe(TITLES[0]);
    expect(late.headers['cache-control']).toBe(CONTENT_CACHE_CONTROL);
    expect(await assignments(env, t.accountId, id)).toHaveLength(306);

    // The look names B the winner with its figures; /results shows it.
    expect(await lookAtExperiment(env.deps.db, (await repo.get(t.accountId, id))!, Date.now(), 0)).toBe('winner');
    expect(await repo.get(t.accountId, id)).toMatchObject({ status: 'decided', winnerKey: 'B' });
    const [winner] = await cards(env, t.accountId, 'experiment_winner');
    expect(winner.title).toBe('Use B as the title of a blog post for "freight quotes"');
    expect(winner.summary).toMatch(
      /^clicks 15\/153 \(9\.8%\) vs 60\/153 \(39\.2%\), winner B: B − A \+29\.4 points \(\+300%\), 97% interval \+[\d.]+ to \+[\d.]+ /,
    );
    expect(winner.summary).toMatch(/points .*, planned sample reached/);
    expect(winner.prompt).toContain("the post's title for every reader: approving publishes an update of the post");
    const results = await env.api().get('/api/v1/results').set(auth(t.token));
    const [shown] = ResultsResponse.parse(results.body).results.experiments;
    expect(shown).toMatchObject({ id, thing: 'post_title', status: 'decided', decision: { state: 'winner', winner: 'B' } });
    expect(shown!.variants.map((v) => [v.exposures, v.outcomes])).toEqual([
      [153, 15],
      [153, 60],
    ]);

    // Adopted: the post is updated through the blog path; every reader, with or without an id, sees B.
    expect((await approve(env, t.token, winner.id)).status).toBe(200);
    await runFollowUps(env.deps);
    await sweepCards(env.deps);
    expect((await repo.get(t.accountId, id))!.adoptedAt).not.toBeNull();
    expect((await list()).body.posts.map((p: { title: string }) => p.title)).toEqual([TITLES[1]]);
    for (const reader of [undefined, a[0]![0], 'someone-new']) {
      const res = await read(reader);
      expect(res.body.post).toMatchObject({ title: TITLES[1], excerpt: POST.excerpt, tags: ['freight'] });
      expect(res.body.post.markdown).toBe(POST.markdown);
    }
    expect(await rows(env, 'posts', { account_id: t.accountId })).toHaveLength(1);
  });

  it("counts a conversion of a reader's click for its title; a dismissed post leaves nothing pending", async ({ env }) => {
    const t = await env.tenant();
    const site = await siteToken(env, t.accountId);
    const server = (
      await mintToken(env.deps.db, env.config.tokenPrefix, { accountId: t.accountId, label: 's', scopes: ['measurement:write'] })
    ).token;
    const propose = async (args: Record<string, unknown>) => {
      const out = await tool(env, t.accountId, { ...PROPOSE, ...args });
      const id = /experiment (exp_\S+)/.exec(out.result)![1]!;
      const [card] = (await cards(env, t.accountId, 'experiment')).filter((c) => c.payload.experimentId === id);
      expect((await approve(env, t.token, card.id)).status).toBe(200);
      await runFollowUps(env.deps);
      return { id, blogCard: postCardId(t.accountId, id) };
    };
    const { id, blogCard } = await propose({ metric: 'conversion_rate' });
    expect((await approve(env, t.token, blogCard)).status).toBe(200);
    await runFollowUps(env.deps);
    const [post] = (await env.api().get('/api/v1/content/posts').set(auth(site))).body.posts;
    const links: string[] = [];
    for (const reader of ['buyer', 'browser']) {
      const res = await env.api().get(`/api/v1/content/posts/${post.slug}`).query({ reader }).set(auth(site));
      links.push(/href="(http[^"]+\/l\/[0-9A-Za-z]{12}\?x=[0-9A-Za-z]{16})"/.exec(res.body.post.html)![1]!);
    }
    const visits: string[] = [];
    for (const [i, link] of links.entries()) {
      const u = new URL(link);
      const res = await env
        .api()
        .get(u.pathname + u.search)
        .set('User-Agent', `${BROWSER} ${i}`);
      visits.push(new URL(res.headers.location!).searchParams.get('gvid')!);
    }
    const sale = { eventId: 'order-1', name: 'purchase', visitId: visits[0], occurredAt: Date.now() - 1_000, value: 50, currency: 'USD' };
    expect(
      (
        await env
          .api()
          .post('/api/v1/measurement/events')
          .set(auth(server))
          .send({ events: [sale] })
      ).status,
    ).toBe(200);
    const repo = experimentsRepository(env.deps.db);
    const e = (await repo.get(t.accountId, id))!;
    const buyer = (await assignments(env, t.accountId, id)).find((r) => r.click_visit_id === visits[0])!;
    const { counts } = await repo.counts(e, Date.now());
    expect(counts.map((c) => c.outcomes)).toEqual(counts.map((_, i) => (i === buyer.variant_index ? 1 : 0)));
    expect(counts.reduce((n, c) => n + c.exposures, 0)).toBe(2);

    // Its blog card dismissed, the post never goes out: no reader can come, nothing is pending.
    const other = await propose({});
    const dismissed = await env.api().post(`/api/v1/review/${other.blogCard}/dismiss`).set(auth(t.token)).send({});
    await runFollowUps(env.deps);
    expect(dismissed.status).toBe(200);
    const o = (await repo.get(t.accountId, other.id))!;
    expect((await repo.counts(o, Date.now())).pending).toBe(0);
    expect((await repo.counts(e, Date.now())).pending).toBe(1);
  });

  it('refuses what a post title cannot be measured by, a post without a link, and repeated titles; nothing is written', async ({ env }) => {
    const t = await env.tenant();
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ metric: 'reply_rate' }, /cannot be measured by its reply rate: readers of a post do not reply/],
      [{ metric: 'positive_reply_rate' }, /cannot be measured by its positive-reply rate/],
      [{ post: { ...POST, markdown: 'No link here.' } }, /a click rate needs a link in the post, and its body has none/],
      [{ challengers: [TITLES[0].toUpperCase()] }, /the titles must differ/],
      [{ challengers: [] }, /name 1 to 3 challengers/],
      [{ post: undefined }, /a post-title experiment needs the post/],
    ];
    for (const [args, error] of cases) {
      const out = await tool(env, t.accountId, { ...PROPOSE, ...args });
      expect(out.ok, JSON.stringify(args)).toBe(false);
      expect(out.result).toMatch(/^no experiment was proposed: /);
      expect(out.result).toMatch(error);
    }
    expect(await rows(env, 'experiments', { account_id: t.accountId })).toEqual([]);
    expect(await rows(env, 'review_cards', { account_id: t.accountId })).toEqual([]);
    // A conversion rate is a reader's click that led to a conversion: proposed.
    expect(await tool(env, t.accountId, { ...PROPOSE, metric: 'conversion_rate' })).toMatchObject({ ok: true });
  });
});
