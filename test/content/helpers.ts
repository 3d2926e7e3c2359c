import type { Db } from '../../src/db.js';
import type { Card } from '../../src/review/cards/cards.repository.js';
import { mintToken } from '../../src/tokens/tokens.service.js';
import type { TestEnv } from '../helpers/fixture.js';
import { buildCard } from '../helpers/factories.js';

import { auth } from '../helpers/auth.js';
import { row } from '../helpers/rows.js';

export { auth };

/** A waiting blog_post card as the ship tool writes it: draft { subject: title, body: markdown }, the rest at the top. */
export function blogCard(db: Db, accountId: string, o: { title: string; markdown?: string; [k: string]: unknown }): Promise<Card> {
  const { title, markdown, ...rest } = o;
  return buildCard(db, accountId, 'approval', {
    sourceType: 'blog_post',
    title: `Blog post: ${title}`,
    payload: { work: 'blog_post', draft: { subject: title, body: markdown ?? `An opening paragraph about ${title}.` }, ...rest },
  });
}

/** Approves a card through the review API, as a person with review:write. */
export const approve = (env: TestEnv, token: string, cardId: string) =>
  env.api().post(`/api/v1/review/${cardId}/answer`).set(auth(token)).send({ action: 'approve' });

/** A website's token on the same account: content:read only. */
export async function siteToken(env: TestEnv, accountId: string): Promise<string> {
  return (await mintToken(env.deps.db, env.config.tokenPrefix, { accountId, label: 'website', scopes: ['content:read'] })).token;
}

/** A card approved and its post published: the post as the Content API shows it. */
export async function published(env: TestEnv, t: { accountId: string; token: string }, o: Parameters<typeof blogCard>[2]) {
  const card = await blogCard(env.deps.db, t.accountId, o);
  const res = await approve(env, t.token, card.id);
  if (res.status !== 200) throw new Error(`approve answered ${res.status} ${JSON.stringify(res.body)}`);
  const post = await row(env, 'posts', { account_id: t.accountId, card_id: card.id });
  return { card, slug: post.slug as string };
}
