/** Spec 4.3 / 8.3 limits. */
export const TEXT_MAX_CHARS = 4_000;
export const TEXT_MAX_BYTES = 8_000;
export const CLIENT_REQUEST_ID_MAX = 128;
export const CLIENT_REQUEST_ID_CHARS = /^[A-Za-z0-9_.:-]*$/;
export const WAIT_MAX_SECONDS = 120;

/** A POST /agent/messages body as the API validated it (api/routes/agent.schemas.ts). */
export interface MessageFields {
  text: string;
  clientRequestId?: string | undefined;
  waitSeconds?: number | undefined;
  interrupt?: boolean | undefined;
  queue?: boolean | undefined;
}

export interface MessageRequest {
  text: string;
  clientRequestId: string | null;
  waitSeconds: number | null;
  mode: 'interrupt' | 'queue';
  /** `interrupt: false` was sent: nothing is sent while this token's newest message is unfinished. */
  holdIfBusy: boolean;
}

/** What a valid body asks for: `queue: true` waits behind running work; `interrupt: false` holds while busy. */
export function messageRequest(b: MessageFields): MessageRequest {
  return {
    text: b.text,
    clientRequestId: b.clientRequestId ?? null,
    waitSeconds: b.waitSeconds ?? null,
    mode: b.queue === true ? 'queue' : 'interrupt',
    holdIfBusy: b.interrupt === false,
  };
}
