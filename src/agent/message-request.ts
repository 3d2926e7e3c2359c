import { BadRequest, Rejected, type AppError } from '../errors.js';

/** Spec 4.3 / 8.3 limits. */
export const TEXT_MAX_CHARS = 4_000;
export const TEXT_MAX_BYTES = 8_000;
export const CLIENT_REQUEST_ID_MAX = 128;
const CLIENT_REQUEST_ID_CHARS = /^[A-Za-z0-9_.:-]*$/;
export const WAIT_MAX_SECONDS = 120;

export interface MessageRequest {
  text: string;
  clientRequestId: string | null;
  waitSeconds: number | null;
  mode: 'interrupt' | 'queue';
  /** `interrupt: false` was sent: nothing is sent while this token's newest message is unfinished. */
  holdIfBusy: boolean;
}

/**
 * Reads a POST /agent/messages body by the spec's rules. Returns the first problem instead of throwing
 * so the caller can add `notSent` to it (a 400 or 409 can carry it when `interrupt` is false).
 * Schema problems are 400s; over 4,000 characters and a disallowed clientRequestId character are 409s.
 */
export function readMessageRequest(body: unknown): { ok: true; value: MessageRequest } | { ok: false; error: AppError } {
  const fail = (error: AppError) => ({ ok: false as const, error });
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return fail(new BadRequest('body must be a JSON object'));
  const b = body as Record<string, unknown>;

  if (b.text === undefined || b.text === null) return fail(new BadRequest('text is required'));
  if (typeof b.text !== 'string') return fail(new BadRequest('text must be a string'));
  if (b.text.trim() === '') return fail(new BadRequest('text must not be empty'));
  if (Buffer.byteLength(b.text, 'utf8') > TEXT_MAX_BYTES) return fail(new BadRequest('text must be at most 8,000 UTF-8 bytes'));
  if ([...b.text].length > TEXT_MAX_CHARS) return fail(new Rejected('text must be at most 4,000 characters'));

  let clientRequestId: string | null = null;
  if (b.clientRequestId !== undefined) {
    if (typeof b.clientRequestId !== 'string') return fail(new BadRequest('clientRequestId must be a string'));
    if (b.clientRequestId === '') return fail(new BadRequest('clientRequestId must not be empty'));
    if (b.clientRequestId.length > CLIENT_REQUEST_ID_MAX) return fail(new BadRequest('clientRequestId must be at most 128 characters'));
    if (!CLIENT_REQUEST_ID_CHARS.test(b.clientRequestId)) {
      return fail(new Rejected('clientRequestId may contain only letters, digits and _ . : -'));
    }
    clientRequestId = b.clientRequestId;
  }

  let waitSeconds: number | null = null;
  if (b.waitSeconds !== undefined) {
    const w = b.waitSeconds;
    if (typeof w !== 'number' || !Number.isInteger(w) || w < 0 || w > WAIT_MAX_SECONDS) {
      return fail(new BadRequest('waitSeconds must be an integer from 0 to 120'));
    }
    waitSeconds = w;
  }
  if (b.interrupt !== undefined && typeof b.interrupt !== 'boolean') return fail(new BadRequest('interrupt must be true or false'));
  if (b.queue !== undefined && typeof b.queue !== 'boolean') return fail(new BadRequest('queue must be true or false'));
  if (b.queue === true && b.interrupt !== undefined) return fail(new BadRequest('queue cannot be combined with interrupt'));

  return {
    ok: true,
    value: {
      text: b.text,
      clientRequestId,
      waitSeconds,
      mode: b.queue === true ? 'queue' : 'interrupt',
      holdIfBusy: b.interrupt === false,
    },
  };
}
