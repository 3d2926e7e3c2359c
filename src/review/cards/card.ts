/** A review card as spec 2.2 names its fields, plus the owning account and the turn that made it. */
export interface Card {
  id: string;
  accountId: string;
  kind: string;
  sourceType: string;
  status: string;
  title: string;
  prompt: string;
  summary: string;
  detail: unknown;
  priority: string;
  options: unknown;
  textInput: unknown;
  budgetChange: unknown;
  payload: Record<string, unknown>;
  actions: string[];
  primaryLabel: string;
  autoResolveAt: number | null;
  dueAt: number | null;
  snoozedUntil: number | null;
  leadId: string | null;
  leadContactId: string | null;
  postId: string | null;
  turnId: string | null;
  createdAt: number;
  updatedAt: number;
  resolvedAt: number | null;
  resolution: unknown;
  /** The kind of work it ships (trust ladder key), or null. */
  kindOfWork: string | null;
  /** Arose from outside data (a webhook payload): never auto-resolves. */
  fromOutside: boolean;
  ladderChecked: boolean;
  version: number;
  history: unknown[];
  requestedChanges: string | null;
  revisionDueAt: number | null;
  revisionTurnId: string | null;
}

export type NewCard = Pick<Card, 'id' | 'accountId' | 'kind' | 'sourceType' | 'title' | 'payload' | 'actions' | 'primaryLabel'> &
  Partial<Omit<Card, 'id' | 'accountId' | 'kind' | 'sourceType' | 'title' | 'payload' | 'actions' | 'primaryLabel'>>;
