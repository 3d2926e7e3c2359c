/**
 * Kinds of work that ship something. Each names the channel adapter that carries it out
 * (src/channels/registry.ts); all follow the account's approval settings, and `spend` always waits
 * for a person. An `experiment` ships by starting: its mail is email work of its own.
 */
export const KINDS_OF_WORK = ['email', 'sequence', 'network_message', 'blog_post', 'ad_test', 'spend', 'experiment'] as const;
export type KindOfWork = (typeof KINDS_OF_WORK)[number];

/** How people call each kind in a sentence ("network messages cannot ship: …"). */
export const WORK_NOUNS: Record<KindOfWork, string> = {
  email: 'emails',
  sequence: 'sequences',
  network_message: 'network messages',
  blog_post: 'blog posts',
  ad_test: 'ad tests',
  spend: 'spending',
  experiment: 'experiments',
};
