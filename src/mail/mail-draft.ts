/** A mail card's message: `payload.draft` (or the payload itself) with the title as the subject it lacks. */
export function mailDraftOf(c: { title: string; payload: Record<string, unknown> }): {
  to: string | null;
  subject: string;
  body: string;
  inReplyTo: string | null;
} {
  const p = c.payload;
  const draft = (p.draft && typeof p.draft === 'object' ? p.draft : p) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  const to = typeof p.to === 'string' && p.to.trim() ? p.to.trim() : null;
  return {
    to,
    subject: str(draft.subject) || c.title,
    body: str(draft.body),
    inReplyTo: typeof p.inReplyTo === 'string' ? p.inReplyTo : null,
  };
}
