/** The review card as /api/v1/review answers it (the contract's section 2.2); the desk draws from `actions`. */
export interface ReviewCard {
  id: string;
  kind: string;
  sourceType: string;
  status: string;
  title: string;
  prompt: string;
  summary: string;
  detail: Record<string, unknown> | null;
  priority: string;
  options: { value: string; label: string }[] | null;
  textInput: Record<string, unknown> | null;
  budgetChange: Record<string, unknown> | null;
  payload: Record<string, unknown>;
  actions: string[];
  primaryLabel: string;
  autoResolveAt: number | null;
  dueAt: number | null;
  snoozedUntil: number | null;
  leadId: string | null;
  createdAt: number;
  updatedAt: number;
  resolution: Record<string, unknown> | null;
}

/** A live stream event's data (docs/dashboard.md, "Live updates"). */
export interface LiveEvent {
  cardId: string;
  kind: string;
  status: string;
  decided: boolean;
  by: string;
  at: number;
}

export const QUEUE_STATUSES = ['pending', 'needs_revision'];

/** The verb that ships the card (the primary button), in the order a card's `actions` may hold them. */
export const PRIMARY_VERBS = ['send', 'approve', 'answer', 'choose'];

export function primaryVerb(card: ReviewCard): string | null {
  return card.actions.find((a) => PRIMARY_VERBS.includes(a)) ?? null;
}

/** The words for what happened to a card, for "Dismissed by Ana". */
export function whatHappened(status: string): string {
  switch (status) {
    case 'dismissed':
      return 'Dismissed';
    case 'sent':
    case 'sending':
      return 'Sent';
    case 'resolved':
      return 'Approved';
    case 'snoozed':
      return 'Snoozed';
    case 'needs_revision':
      return 'Changes requested';
    default:
      return `Moved to ${status.replace(/_/g, ' ')}`;
  }
}

/** What the desk says once one of the person's own verbs worked: "Dismissed: “…”." */
export const DONE_WORDS: Record<string, string> = {
  send: 'Sent',
  approve: 'Approved',
  answer: 'Answered',
  choose: 'Chosen',
  request_changes: 'Changes requested',
  snooze: 'Snoozed',
  dismiss: 'Dismissed',
};

/** A time of day in the reader's clock, for "at 14:02". */
export const clockTime = (at: number) => new Date(at).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** Who else took a card the person was acting on, and when: "Dismissed by Ana Lima at 14:02: “…”." */
export const takenWords = (status: string, by: string, at: number, title: string) =>
  `${whatHappened(status)} by ${by} at ${clockTime(at)}: “${title}”.`;

/** Who decided a card, from its `resolution` alone (the trust ladder, an approval setting), when it says so. */
export function deciderFrom(resolution: Record<string, unknown> | null): string | null {
  const by = resolution?.by;
  return by === 'trust_ladder' ? 'the trust ladder' : by === 'setting' ? 'an approval setting' : null;
}

/** A duration in words: "2 hours 5 minutes", "under a minute". */
export function durationWords(ms: number): string {
  if (ms < 60_000) return 'under a minute';
  const minutes = Math.floor(ms / 60_000);
  const days = Math.floor(minutes / 1440);
  const hours = Math.floor((minutes % 1440) / 60);
  const mins = minutes % 60;
  const part = (n: number, unit: string) => (n ? `${n} ${unit}${n === 1 ? '' : 's'}` : '');
  if (days) return [part(days, 'day'), part(hours, 'hour')].filter(Boolean).join(' ');
  return [part(hours, 'hour'), part(mins, 'minute')].filter(Boolean).join(' ');
}

/** Snooze choices: until a time in the reader's own clock. */
export function snoozeChoices(now: Date): { label: string; until: number }[] {
  const at = (days: number, hour: number) => {
    const d = new Date(now);
    d.setDate(d.getDate() + days);
    d.setHours(hour, 0, 0, 0);
    return d.getTime();
  };
  const nextMonday = ((8 - now.getDay()) % 7 || 7) as number;
  return [
    { label: 'One hour', until: now.getTime() + 3_600_000 },
    { label: 'Four hours', until: now.getTime() + 4 * 3_600_000 },
    { label: 'Tomorrow at 9:00', until: at(1, 9) },
    { label: 'Next Monday at 9:00', until: at(nextMonday, 9) },
  ];
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const DROP = 'script,style,iframe,frame,object,embed,link,meta,base,form,input,button,textarea,select,svg,math,template';

/**
 * The mail as a document for the preview frame. A text body is escaped into paragraphs; an HTML body keeps
 * its text markup only: no script, style, frame, form or embedded object, no `on…` attribute, no link or
 * image that leaves the page (only `data:` images and plain http(s) links, which the frame cannot follow).
 * The frame is `sandbox=""` as well: even what slipped through could not run.
 */
export function mailDocument(mail: { subject?: string; body?: string; html?: string; to?: string }): string {
  let body: string;
  if (typeof mail.html === 'string' && mail.html) {
    const doc = new DOMParser().parseFromString(mail.html, 'text/html');
    for (const el of Array.from(doc.querySelectorAll(DROP))) el.remove();
    for (const el of Array.from(doc.body.querySelectorAll('*'))) {
      for (const attr of Array.from(el.attributes)) {
        const name = attr.name.toLowerCase();
        const value = attr.value.trim().toLowerCase();
        if (name.startsWith('on') || name === 'style' || name === 'srcset') el.removeAttribute(attr.name);
        else if ((name === 'src' || name === 'background' || name === 'poster') && !value.startsWith('data:image/'))
          el.removeAttribute(attr.name);
        else if (name === 'href' && !/^(https?:|mailto:)/.test(value)) el.removeAttribute(attr.name);
      }
    }
    body = doc.body.innerHTML;
  } else {
    body = (mail.body ?? '')
      .split(/\n{2,}/)
      .map((p) => `<p>${escapeHtml(p).replace(/\n/g, '<br>')}</p>`)
      .join('');
  }
  const head = mail.subject ? `<p><strong>${escapeHtml(mail.subject)}</strong></p><hr>` : '';
  return `<!doctype html><html><head><meta charset="utf-8"><title>Mail preview</title></head><body>${head}${body}</body></html>`;
}
