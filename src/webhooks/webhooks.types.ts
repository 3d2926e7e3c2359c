/** Spec 2.10 / 8.2: what a hook is and the limits its deliveries live under. */
export const HOOK_LABEL = /^[a-z0-9_-]{1,32}$/;
export const HOOK_LABEL_RULE = 'label must be 1 to 32 characters of lowercase letters, digits, - and _';
export const MAX_ACTIVE_HOOKS = 20;
/** Spec 8.2: 64,000 bytes per body (64,000 accepted, 64,001 refused). */
export const MAX_BODY_BYTES = 64_000;
/**
 * Arrays and objects in a JSON body nest at most this deep (a scalar is 0, `[]` is 1): deeper is a 400
 * at intake on every JSON route, so nothing after intake can run out of stack on it.
 */
export const MAX_JSON_DEPTH = 64;
export const HOOK_TOKEN_PREFIX = 'whk_';
export const HOOK_PATH = '/api/webhook/hook';
export const LIMIT_WINDOW_MS = 60 * 60 * 1000;

export const OUTCOMES = ['Accepted', 'Rate Limited', 'Worker Error'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export type HookStatus = 'active' | 'disabled';

export interface Hook {
  hookId: string;
  accountId: string;
  label: string;
  status: HookStatus;
  createdAt: number;
  updatedAt: number;
}

export interface Delivery {
  deliveryId: string;
  accountId: string;
  hookId: string;
  at: number;
  outcome: Outcome;
  bytes: number;
  body: string | null;
  replayOf: string | null;
  turnId: string | null;
  error: string | null;
  /** How many deliveries the row stands for: more than 1 only on a minute's refusals row. */
  deliveries: number;
  /** A refusals row's last refused delivery; null on other rows. */
  lastAt: number | null;
}

/** What the agent made of an accepted delivery (`hook deliveries`). */
export interface AgentOutcome {
  /** The headline: the most telling thing the turn produced, or `nothing yet`. */
  made: 'card' | 'lead' | 'note' | 'nothing yet';
  /** The turn's status; null while the webhook-events job has not handed it over. */
  turn: 'queued' | 'running' | 'replied' | 'failed' | null;
  lead: { id: string; domain: string } | null;
  card: { id: string; sourceType: string; status: string } | null;
  note: string | null;
}
