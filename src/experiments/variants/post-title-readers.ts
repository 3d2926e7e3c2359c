/**
 * Experiments on a blog post's title (`post_title`; docs/decisions/experiments.md, "What can vary: a blog post's
 * title"). The unit is a reader of the post: the customer's site names one (`reader` on the Content API's read), and
 * the first read while the experiment runs writes the reader's assignment (its `contact` a keyed hash of the reader
 * id, exposed at that read) with a random token; the post's tracked links carry that token (`?x=`), and a person's
 * click through one records the reader's first click and its visit. Exposures are readers, outcomes readers who
 * clicked (or whose click's visit converted). This file reads and writes those rows (content's reader post and measurement's
 * clicks are handed `readerTitle` and `readerClicked`); the kind itself is post-title.ts.
 */
import type { Queryable } from '../../db.js';
import { randomBase62 } from '../../ids.js';
import { cardsInStatus } from '../../review/cards/doors.js';
import { FENCES_SQL } from '../../shipping/fence.repository.js';
import { assignVariant, VARIANT_KEYS } from '../../statistics/assignment.js';
import type { Counted, ExperimentCounts } from '../experiment.js';

export const POST_THING = 'post_title' as const;

/** What a post-title experiment keeps in its row's `draft`: the post (title A, markdown body) and its card once filed. */
export interface PostDraft {
  subject: string;
  body: string;
  excerpt?: string;
  tags?: string[];
  blogCardId?: string;
}

/** A reader token: 16 base62 characters (95 bits), what a tracked link's `x` parameter must look like. */
export const READER_TOKEN = /^[0-9A-Za-z]{16}$/;

/** A running post-title experiment on a published post: its id, variants' titles and planned sample per variant. */
export interface PostExperiment {
  id: string;
  titles: string[];
  plannedPerVariant: number;
}

/**
 * The running post-title experiment whose blog card published `postId` (its fence's provider id is the post), if any.
 * The newest wins when (by hand) two ran on one post.
 */
export async function runningOnPost(q: Queryable, accountId: string, postId: string): Promise<PostExperiment | null> {
  const { rows } = (await q.raw(
    `SELECT e.id, e.plan FROM experiments e
       JOIN ${FENCES_SQL} s ON s.account_id = e.account_id AND s.card_id = e.draft->>'blogCardId' AND s.status = 'sent'
      WHERE e.account_id = ? AND e.thing = ? AND e.status = 'running' AND s.provider_id = ?
      ORDER BY e.started_at DESC LIMIT 1`,
    [accountId, POST_THING, postId],
  )) as { rows: { id: string; plan: { plannedPerVariant: number; variants: { value: string }[] } }[] };
  const r = rows[0];
  return r ? { id: r.id, titles: r.plan.variants.map((v) => v.value), plannedPerVariant: r.plan.plannedPerVariant } : null;
}

/**
 * The reader's assignment (`contact`: the keyed hash of its id): the one written before, else one written now, exposed
 * now, with a new token (insert … on conflict do nothing, so two first reads at once write one). Null when the reader
 * has none and its variant already has the planned sample: it sees the control and nothing is written.
 */
export async function readerAssignment(
  q: Queryable,
  accountId: string,
  e: PostExperiment,
  contact: string,
  at: number,
): Promise<{ index: number; token: string } | null> {
  const find = () =>
    q('experiment_assignments').where({ account_id: accountId, experiment_id: e.id, contact }).first('variant_index', 'token') as Promise<
      { variant_index: number; token: string | null } | undefined
    >;
  const known = await find();
  if (known?.token) return { index: known.variant_index, token: known.token };
  if (known) return null;
  const index = assignVariant(e.id, contact, e.titles.length);
  const full = (await q('experiment_assignments')
    .where({ account_id: accountId, experiment_id: e.id, variant_index: index })
    .count<{ n: string }[]>({ n: '*' })
    .first()) as { n: string };
  if (Number(full.n) >= e.plannedPerVariant) return null;
  await q('experiment_assignments')
    .insert({
      account_id: accountId,
      experiment_id: e.id,
      contact,
      variant_index: index,
      variant_key: VARIANT_KEYS[index]!,
      assigned_at: at,
      exposed_at: at,
      token: randomBase62(16),
    })
    .onConflict(['account_id', 'experiment_id', 'contact'])
    .ignore();
  const row = await find();
  return row?.token ? { index: row.variant_index, token: row.token } : null;
}

/**
 * A person's click through a tracked link of a post (`postId`) carrying a reader's token: the reader's first click
 * and its visit are recorded, once, while the experiment that published the post runs. A token of no reader of this
 * post's running experiment changes nothing. True when this click was the first.
 */
export async function readerClicked(
  q: Queryable,
  accountId: string,
  postId: string,
  token: string,
  visitId: string,
  at: number,
): Promise<boolean> {
  if (!READER_TOKEN.test(token)) return false;
  const n = await q.raw(
    `UPDATE experiment_assignments a SET clicked_at = ?, click_visit_id = ?
       FROM experiments e JOIN ${FENCES_SQL} s ON s.account_id = e.account_id AND s.card_id = e.draft->>'blogCardId'
      WHERE a.account_id = ? AND a.token = ? AND a.clicked_at IS NULL
        AND e.account_id = a.account_id AND e.id = a.experiment_id AND e.thing = ? AND e.status = 'running'
        AND s.status = 'sent' AND s.provider_id = ?`,
    [at, visitId, accountId, token, POST_THING, postId],
  );
  return ((n as { rowCount?: number }).rowCount ?? 0) > 0;
}

/**
 * A post-title experiment's `pending`: its readers still maturing (`pending` as counted), and one more while readers
 * may still come: until every variant has its planned sample of readers, unless its blog card was dismissed (or
 * settled without publishing), so the post never went out. Others keep theirs.
 */
export async function postPending(
  q: Queryable,
  accountId: string,
  posts: readonly Counted[],
  _maturedBy: number,
  out: Map<string, ExperimentCounts>,
): Promise<void> {
  if (!posts.length) return;
  const cards = posts.map((e) => (e.draft as PostDraft).blogCardId ?? '');
  const dead = await cardsInStatus(q, accountId, cards, ['dismissed', 'resolved']);
  for (const e of posts) {
    const c = out.get(e.id);
    if (!c) continue;
    const full = c.sent.every((n) => n >= (e.plan.plannedPerVariant ?? 0));
    const card = (e.draft as PostDraft).blogCardId;
    if (!full && !(card && dead.has(card))) c.pending += 1;
  }
}

/**
 * The reader's title and token on a post while its title experiment runs (content's reader post is handed this): the
 * reader's assignment, written at the first read; null when none runs or the reader's variant reached its sample.
 */
export async function readerTitle(
  q: Queryable,
  accountId: string,
  postId: string,
  contact: () => Promise<string>,
): Promise<{ title: string | undefined; token: string } | null> {
  const e = await runningOnPost(q, accountId, postId);
  if (!e) return null;
  const mine = await readerAssignment(q, accountId, e, await contact(), Date.now());
  return mine ? { title: e.titles[mine.index], token: mine.token } : null;
}
