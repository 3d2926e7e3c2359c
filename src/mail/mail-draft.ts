/** A Message-ID as headers carry it: angle brackets around something with no space or bracket inside. */
const MESSAGE_ID = /^<[^<>\s]{1,900}>$/;
/** Ids a follow-up's References keeps at most: the first (the thread's start) and the latest ones. */
export const REFERENCES_MAX = 20;

/**
 * The References of a follow-up to `replyId`: the reply's own References (else our first mail's
 * Message-ID), our mail's id first when the reply dropped it, then the reply, each once, at most
 * REFERENCES_MAX (the first and the newest kept, as RFC 5322 suggests trimming).
 */
export function threadChain(ourId: string, replyReferences: string[], replyId: string | null): string[] {
  const ids = [...(replyReferences.includes(ourId) ? [] : [ourId]), ...replyReferences, ...(replyId ? [replyId] : [])];
  const chain = [...new Set(ids.filter((id) => MESSAGE_ID.test(id)))];
  return chain.length <= REFERENCES_MAX ? chain : [chain[0]!, ...chain.slice(-(REFERENCES_MAX - 1))];
}

const messageIds = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && MESSAGE_ID.test(x)).slice(-REFERENCES_MAX) : [];

/** A mail card's message: `payload.draft` (or the payload itself) with the title as the subject it lacks. */
export function mailDraftOf(c: { title: string; payload: Record<string, unknown> }): {
  to: string | null;
  subject: string;
  body: string;
  inReplyTo: string | null;
  /** The thread it answers, oldest first (In-Reply-To last); empty when it answers nothing. */
  references: string[];
} {
  const p = c.payload;
  const draft = (p.draft && typeof p.draft === 'object' ? p.draft : p) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const to = typeof p.to === 'string' && p.to.trim() ? p.to.trim() : null;
  const inReplyTo = typeof p.inReplyTo === 'string' && MESSAGE_ID.test(p.inReplyTo) ? p.inReplyTo : null;
  const references = messageIds(p.references);
  return {
    to,
    subject: str(draft.subject) || c.title,
    body: str(draft.body),
    inReplyTo,
    references: inReplyTo ? [...references.filter((id) => id !== inReplyTo), inReplyTo] : [],
  };
}
