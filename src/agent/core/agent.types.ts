/** What can start a turn. Later issues add inputs by adding a kind here, not a new entry point. */
export const TURN_KINDS = ['message', 'event', 'workflow_run', 'revision', 'wake'] as const;
export type TurnKind = (typeof TURN_KINDS)[number];

export type TurnStatus = 'queued' | 'running' | 'replied' | 'failed';
export type TurnMode = 'interrupt' | 'queue';

/** Outside data (a webhook payload, research): always handed to the brain as a labelled data block. */
export interface OutsideData {
  label: string;
  content: unknown;
}

export interface Turn {
  id: string;
  accountId: string;
  kind: TurnKind;
  origin: string;
  tokenId: string | null;
  clientRequestId: string | null;
  text: string;
  data: OutsideData | null;
  mode: TurnMode;
  status: TurnStatus;
  failure: string | null;
  interrupted: boolean;
  interruptRequestedAt: number | null;
  attempts: number;
  stepsDone: number;
  createdAt: number;
  notBefore: number;
  expiresAt: number | null;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface Bubble {
  text: string;
  at: number;
}

/** Spec 2.3. */
export interface MessageView {
  requestId: string;
  status: TurnStatus;
  text: string;
  sentAt: number;
  replies: Bubble[];
  failure?: string;
  interrupted: boolean;
}

/** Spec 8.3 `running` window: a turn started within 30 minutes and unfinished. */
export const RUNNING_WINDOW_MS = 30 * 60 * 1000;

export const FAILURES = {
  interrupted: 'interrupted by a later message',
  expired: 'still queued after the queued-message lifetime (six hours); send it again',
  workerLost:
    'the workers running this turn stopped three times, so it was given up; what it finished is kept (its replies, cards and ' +
    'leads) and the rest was not done',
  stale: 'the turn did not finish within 30 minutes',
  notResumable:
    'the worker running this turn stopped mid-turn before its steps were recorded, so it was not run again (that could ' +
    'repeat them); what it finished is kept',
} as const;
