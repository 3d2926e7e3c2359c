/**
 * `post_title` (docs/decisions/experiments.md, "What can vary: a blog post's title"): proposed with the post (title,
 * markdown, excerpt, tags) and 1–3 other titles; started by filing ONE `blog_post` card of the post under its control
 * title (it waits under the account's blog post approval settings and publishes through the fenced path like any post;
 * nothing is published before it ships); served per reader by the Content API (src/content/post-title.ts, handed
 * post-title-readers.ts `readerTitle`) and counted from readers' clicks. Approving the winner publishes an update of the
 * post with the winning title, for every reader: that approval is the person's approval.
 */
import { createHash } from 'node:crypto';
import { cannotShip } from '../../channels/registry.js';
import { postsRepository } from '../../content/posts.repository.js';
import type { Db } from '../../db.js';
import { newId } from '../../ids.js';
import { needsApproval } from '../../review/approval.service.js';
import { addCard } from '../../review/cards/doors.js';
import { privateTextIn } from '../../review/cards/private-text.js';
import { fileWork, workCard } from '../../review/file-work.service.js';
import { fencesRepository } from '../../shipping/fence.repository.js';
import { VARIANT_KEYS } from '../../statistics/assignment.js';
import { METRICS, planExperiment } from '../../statistics/plan.js';
import { describePlan } from '../../statistics/wording.js';
import type { Experiment } from '../experiment.js';
import { fileExperiment, type Proposer } from '../experiment-card.js';
import { experimentRows } from '../experiment-rows.js';
import type { OwnWorkKind, Proposal } from './kind.js';
import { POST_THING, type PostDraft, postPending } from './post-title-readers.js';

export { POST_THING, type PostDraft } from './post-title-readers.js';

/** The blog_post card of a post-title experiment: the same id on every try, so it is never filed twice. */
export const postCardId = (accountId: string, experimentId: string): string =>
  `card_p${createHash('sha256').update(`${accountId}\0${experimentId}\0blog_post`).digest('hex').slice(0, 24)}`;

/** The card that adopts a post-title experiment's winner (an update of the post): one per experiment. */
export const adoptCardId = (accountId: string, experimentId: string): string =>
  `card_p${createHash('sha256').update(`${accountId}\0${experimentId}\0adopt`).digest('hex').slice(0, 24)}`;

const AUDIENCE = 'readers of the post whom your site names (the `reader` of its Content API read), each shown one title';
const TITLE_MAX = 200;
const PUBLISHES = 'Nothing is published before that card ships.';

/**
 * Proposes a post-title experiment: checks the post, its titles and metric (clicks on the post's links, or conversions
 * attributed to them; never replies: a reader does not reply), plans its sample in readers, and files its `experiment`
 * card. Refused (a string back, nothing written) on any of those, or when a blog post cannot ship on the account.
 */
async function proposePostTitleExperiment(db: Db, by: Proposer, input: Proposal): Promise<{ id: string; cardId: string } | string> {
  const p = input.post;
  if (!p?.title?.trim() || !p.markdown?.trim()) return 'a post-title experiment needs the post: its title and markdown body';
  const titles = [p.title, ...input.challengers].map((t) => String(t).trim());
  if (titles.length < 2 || titles.length > 4) return 'name 1 to 3 other titles as challengers';
  if (titles.some((t) => !t || t.length > TITLE_MAX)) return `each title must be 1 to ${TITLE_MAX} characters`;
  if (new Set(titles.map((t) => t.toLowerCase())).size !== titles.length)
    return "the titles must differ from each other and from the post's";
  const metric = input.metric ?? 'click_rate';
  if (metric !== 'click_rate' && metric !== 'conversion_rate') {
    return (
      `a post's title cannot be measured by its ${METRICS[metric].rate}: readers of a post do not reply; ` +
      'use click_rate (readers who click a link in the post) or conversion_rate (readers whose click led to a conversion)'
    );
  }
  if (!/https?:\/\/\S+/.test(p.markdown)) return `a ${METRICS[metric].rate} needs a link in the post, and its body has none`;
  const quotes = await privateTextIn(db, by.accountId, [...titles, p.markdown, p.excerpt ?? '']);
  if (quotes) return `the experiment ${quotes}, so nothing was proposed; write it in your own words`;
  const missing = await cannotShip(db, by.accountId, 'blog_post');
  if (missing) return `a post-title experiment publishes the post, and ${missing}`;
  const baselineRate = input.baselineRate ?? 0.04;
  const minimumDetectableEffect = input.minimumDetectableEffect ?? 0.02;
  if (baselineRate + minimumDetectableEffect >= 1) return 'the baseline rate and the effect must add up to less than 1';

  const id = newId('exp');
  const variants = titles.map((value, i) => ({ key: VARIANT_KEYS[i]!, description: `"${value}"`, value }));
  const plan = planExperiment({
    id,
    hypothesis: input.hypothesis ?? `the title changes the ${metric.replace(/_/g, ' ')} of the post about ${input.topic}.`,
    subject: `the title of the post about ${input.topic}`,
    variants,
    metric,
    audience: AUDIENCE,
    baselineRate,
    minimumDetectableEffect,
  });
  const storedPlan = { ...plan, variants };
  const blogNeeds = await needsApproval(db, by.accountId, 'blog_post');
  const waits = blogNeeds ? `waits under your blog post approval settings. ${PUBLISHES}` : 'this account publishes without approval.';
  const start = `On start it files one blog post card of this post under the title A, which ${waits}`;
  const draft: PostDraft = {
    subject: titles[0]!,
    body: p.markdown,
    ...(p.excerpt?.trim() ? { excerpt: p.excerpt.trim() } : {}),
    ...(p.tags?.length ? { tags: p.tags } : {}),
  };
  return fileExperiment(db, by, {
    id,
    thing: POST_THING,
    topic: input.topic,
    plan: storedPlan,
    draft,
    audience: [],
    title: `Experiment: the title of the post about "${input.topic}"`,
    details: { variants, metric, plannedPerVariant: plan.plannedPerVariant },
    prompt: (needs) =>
      `${describePlan(storedPlan, { unit: 'reader', control: "the post's own title" })}\n${start}\n${
        needs ? 'Approve to start it.' : 'This account lets experiments start without approval.'
      }`,
  });
}

/**
 * Files a running post-title experiment's one `blog_post` card (the post under title A; payload `experimentId`) under
 * the account's blog post approval settings; its fixed id and a claim on the experiment's row make it once. Answers
 * how many it filed (0 or 1).
 */
async function filePostTitleCard(db: Db, e: Experiment): Promise<number> {
  const draft = e.draft as PostDraft;
  if (e.thing !== POST_THING || e.status !== 'running' || draft.blogCardId) return 0;
  const id = postCardId(e.accountId, e.id);
  return db.transaction(async (trx) => {
    if (!(await experimentRows(trx).claimCard(e.accountId, e.id, 'blogCardId', id))) return 0;
    await fileWork(trx, {
      accountId: e.accountId,
      turnId: null,
      fromOutside: false,
      work: 'blog_post',
      id,
      title: `Blog post: ${draft.subject}`.slice(0, 200),
      subject: draft.subject,
      body: draft.body,
      details: { experimentId: e.id, topic: e.topic, ...(draft.excerpt ? { excerpt: draft.excerpt } : {}), tags: draft.tags ?? [] },
      prompt: (needs) => ({
        prompt:
          `Experiment ${e.id} started: this post is published under title A; while the experiment runs, each reader your ` +
          `site names sees one of its ${e.plan.variants.length} titles. ${needs ? `Review before it ships. ${PUBLISHES}` : ''}`.trim(),
      }),
    });
    return 1;
  });
}

/** A post-title experiment's result card in post words: approving the winner publishes it as the post's title. */
function postTitleResultCard<C extends { summary: string; prompt: string; payload: Record<string, unknown> }>(e: Experiment, card: C): C {
  if (e.thing !== POST_THING) return card;
  const winner = e.plan.variants.find((v) => v.key === card.payload.winner);
  const prompt = winner
    ? `${card.summary}. Approve to make ${winner.key} (${winner.description}) the post's title for every reader: approving ` +
      'publishes an update of the post with that title (this approval is the approval of that update).'
    : `${card.summary}. No title did better than chance allows, so the experiment stopped and every reader sees the post's own title.`;
  return { ...card, prompt };
}

/**
 * Adopts a post-title winner: publishes an update of the experiment's post with the winning title (its body, excerpt,
 * tags and author kept) as a `blog_post` card the person's approval of the winner already approved: due at once, the
 * card timers ship it through the fenced path as that person's decision; one card per experiment.
 */
async function adoptPostTitle(db: Db, e: Experiment, title: string, at: number): Promise<void> {
  const draft = e.draft as PostDraft;
  // The post the blog card's fence published (shipping's fence, content's post). A post taken down meanwhile stays
  // down: only a published post is updated.
  const fence = await fencesRepository(db).liveForCard(e.accountId, draft.blogCardId ?? '');
  const post =
    fence?.status === 'sent' && fence.providerId ? await postsRepository(db).publishedById(e.accountId, fence.providerId) : undefined;
  await db.transaction(async (trx) => {
    // Once: a second approval's call finds the experiment adopted and files nothing.
    if (!(await experimentRows(trx).claimAdoption(e.accountId, e.id, at))) return;
    await experimentRows(trx).adopt(e.accountId, e.thing, e.topic, title, e.id, at);
    if (!post) return;
    const id = adoptCardId(e.accountId, e.id);
    const work = {
      accountId: e.accountId,
      turnId: null,
      fromOutside: false,
      work: 'blog_post' as const,
      id,
      title: `Blog post: ${title}`.slice(0, 200),
      subject: title,
      body: '',
      details: { slug: post.slug, excerpt: post.excerpt, adoptedFrom: e.id },
    };
    const reason = `The approval of experiment ${e.id}'s winner publishes "${title}" as the post's title; nobody else needs to act.`;
    // Due now: the card timers ship it through the fenced path as the person's approval (timers.service.ts).
    await addCard(trx, {
      ...workCard(work, false),
      prompt: reason,
      kindOfWork: 'blog_post',
      autoResolveAt: at,
      ladderChecked: true,
      detail: { autoResolve: { at, by: 'person', reason } },
    });
  });
}

export const postTitle: OwnWorkKind<'post_title'> = {
  thing: POST_THING,
  reaches: 'its own work',
  words: 'the title of a blog post',
  startedWorkWaits: 'its post waits under the blog post settings',
  ratio: 'exposed',
  replans: true,
  // Readers still to come while the post is out and short of its sample.
  counts: postPending,
  propose: proposePostTitleExperiment,
  start: filePostTitleCard,
  resultCard: postTitleResultCard,
  // A post title also retitles the published post; its adoption claims the same way.
  adopt: adoptPostTitle,
};
