import type { Bubble, OutsideData, Turn, TurnKind, TurnMode, TurnStatus } from './agent.types.js';

/** An `agent_turns` row as pg returns it (BIGINT columns parsed as numbers, src/db.ts). */
export interface TurnRow {
  id: string;
  account_id: string;
  kind: TurnKind;
  origin: string;
  token_id: string | null;
  client_request_id: string | null;
  text: string;
  data: OutsideData | null;
  mode: TurnMode;
  status: TurnStatus;
  failure: string | null;
  interrupted: boolean;
  interrupt_requested_at: number | null;
  attempts: number;
  steps_done: number;
  created_at: number;
  not_before: number;
  expires_at: number | null;
  started_at: number | null;
  finished_at: number | null;
}

export function toTurn(r: TurnRow): Turn {
  return {
    id: r.id,
    accountId: r.account_id,
    kind: r.kind,
    origin: r.origin,
    tokenId: r.token_id,
    clientRequestId: r.client_request_id,
    text: r.text,
    data: r.data,
    mode: r.mode,
    status: r.status,
    failure: r.failure,
    interrupted: r.interrupted,
    interruptRequestedAt: r.interrupt_requested_at,
    attempts: r.attempts,
    stepsDone: r.steps_done,
    createdAt: r.created_at,
    notBefore: r.not_before,
    expiresAt: r.expires_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/** A turn as it is recorded: the columns a new row sets, before it runs. */
export type NewTurn = Pick<
  Turn,
  | 'id'
  | 'accountId'
  | 'kind'
  | 'origin'
  | 'tokenId'
  | 'clientRequestId'
  | 'text'
  | 'data'
  | 'mode'
  | 'createdAt'
  | 'notBefore'
  | 'expiresAt'
>;

/** Bubbles aggregated as JSON by a statement (`at` may come back as text). */
export const toBubbles = (raw: { text: string; at: number | string }[] | null): Bubble[] =>
  (raw ?? []).map((b) => ({ text: b.text, at: Number(b.at) }));
