import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { BadRequest } from './errors.js';

/**
 * Where a newest-first page stopped: the last row's creation time and insertion sequence, or for a
 * table without a sequence its id (`id`, the tie-break among rows of one time; `seq` is then 0).
 */
export interface CursorPosition {
  at: number;
  seq: number;
  id?: string;
}

const Payload = z.object({
  k: z.string(),
  a: z.string(),
  f: z.string().nullable(),
  t: z.number().int(),
  s: z.number().int(),
  i: z.string().optional(),
});

const INVALID = 'cursor is not valid';

function mac(secret: string, body: string): Buffer {
  return createHmac('sha256', secret).update(body).digest().subarray(0, 18);
}

/**
 * An opaque, tamper-proof cursor: the position, signed together with the list it belongs to, the
 * account and the filter, so a cursor from another account, list or filter is refused.
 */
export function encodeCursor(secret: string, list: string, accountId: string, filter: string | null, pos: CursorPosition): string {
  const position = { k: list, a: accountId, f: filter, t: pos.at, s: pos.seq, ...(pos.id === undefined ? {} : { i: pos.id }) };
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${body}.${mac(secret, body).toString('base64url')}`;
}

/** The position in `cursor`; 400 `cursor is not valid` for anything this service did not issue for this request. */
export function decodeCursor(secret: string, list: string, accountId: string, filter: string | null, cursor: string): CursorPosition {
  const [body, sig, extra] = cursor.split('.');
  if (!body || !sig || extra !== undefined) throw new BadRequest(INVALID);
  // Compare the text, not decoded bytes: base64 decoding ignores stray trailing characters.
  const given = Buffer.from(sig);
  const want = Buffer.from(mac(secret, body).toString('base64url'));
  if (given.length !== want.length || !timingSafeEqual(given, want)) throw new BadRequest(INVALID);
  let parsed: z.infer<typeof Payload>;
  try {
    parsed = Payload.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    throw new BadRequest(INVALID);
  }
  if (parsed.k !== list || parsed.a !== accountId || parsed.f !== filter) throw new BadRequest(INVALID);
  return { at: parsed.t, seq: parsed.s, ...(parsed.i === undefined ? {} : { id: parsed.i }) };
}
