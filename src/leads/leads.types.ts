/** A contact's own mail status: nothing sent yet, mail reached it, it replied, its address bounced, it left. */
export const CONTACT_STATUSES = ['new', 'contacted', 'replied', 'bounced', 'unsubscribed'] as const;
export type ContactStatus = (typeof CONTACT_STATUSES)[number];

/** Lead statuses, in the order a lead usually moves through them (spec 2.8: "not shown", decided here). */
export const LEAD_STATUSES = [
  'new',
  'researched',
  'drafted',
  'contacted',
  'replied',
  'bounced',
  'unsubscribed',
  'declined',
  'converted',
] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/**
 * The kind of a reply, never its text (spec 6.2). Null until the lead replied. Set by the mail loop's
 * classification; `out_of_office` is kept for leads recorded before it (an automatic reply
 * no longer changes the lead).
 */
export const REPLY_KINDS = [
  'interested',
  'question',
  'referral',
  'not_now',
  'not_interested',
  'wrong_person',
  'unsubscribe',
  'out_of_office',
  'other',
] as const;
export type ReplyKind = (typeof REPLY_KINDS)[number];

/** Caps of spec 2.8 / 8.3, applied when a lead is read (what is stored is kept whole). */
export const LEAD_CAPS = {
  fieldValue: 1_000,
  draftText: 16_000,
  reasoning: 8_000,
  sourcesPerEntry: 20,
  sourceUrl: 2_048,
  contacts: 50,
  label: 120,
  tags: 20,
  tag: 64,
  columns: 50,
} as const;

export interface LeadSource {
  url: string;
  title: string;
}

export interface ResearchInput {
  key: string;
  reasoning: string;
  sources: LeadSource[];
}

export interface ContactInput {
  name?: string | null;
  email?: string | null;
  title?: string | null;
  profileUrl?: string | null;
}

export interface UpsertLeadInput {
  domain: string;
  companyName?: string | null;
  status?: string;
  replyKind?: string | null;
  declineReason?: string | null;
  score?: number | null;
  scoreReasons?: string[];
  research?: ResearchInput[];
  contacts?: ContactInput[];
  draft?: { subject: string; body: string } | null;
  fields?: Record<string, string>;
  /** Creation time; defaults to now (demo data backdates it). */
  createdAt?: number;
}

export interface Contact {
  id: string;
  name: string | null;
  email: string | null;
  title: string | null;
  profileUrl: string | null;
  /** The contact's own mail status (src/leads/contact-status.ts) and its reply's kind. */
  status: ContactStatus;
  replyKind: string | null;
}

export interface LeadListItem {
  id: string;
  domain: string;
  companyName: string | null;
  status: string;
  replyKind: string | null;
  declineReason: string | null;
  score: number | null;
  scoreReasons: string[];
  vertical: string | null;
  archetype: string | null;
  tags: string[];
  fields: Array<{ key: string; value: string | null }>;
  contact: Contact | null;
  createdAt: number;
}

export interface LeadDetail extends LeadListItem {
  draft: { subject: string; body: string } | null;
  research: Array<{ key: string; reasoning: string; sources: LeadSource[]; sourcesTruncated: boolean }>;
  contacts: Contact[];
  contactsTruncated: boolean;
}

export interface LeadLabels {
  id: string;
  domain: string;
  vertical: string | null;
  archetype: string | null;
  tags: string[];
}
