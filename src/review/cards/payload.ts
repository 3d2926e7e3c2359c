/** Spec 8.3: long text inside a card payload is capped at 8 KB in what the API returns (UTF-8 bytes, cut on a character). */
export const PAYLOAD_TEXT_LIMIT = 8 * 1024;

function capText(s: string): string {
  if (Buffer.byteLength(s, 'utf8') <= PAYLOAD_TEXT_LIMIT) return s;
  let out = Buffer.from(s, 'utf8').subarray(0, PAYLOAD_TEXT_LIMIT).toString('utf8');
  // A cut inside a multi-byte character leaves U+FFFD at the end; drop it.
  out = out.replace(/\uFFFD+$/, '');
  return out;
}

/** Applies `cap` to every string in a payload, at any depth. */
function mapStrings(value: unknown, cap: (s: string) => string): unknown {
  if (typeof value === 'string') return cap(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, cap));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, mapStrings(v, cap)]));
  }
  return value;
}

/** The payload as the API shows it: every string capped at PAYLOAD_TEXT_LIMIT. */
export const capPayload = (value: unknown): unknown => mapStrings(value, capText);

/**
 * A stored draft is kept whole, so shipping sends what was written: each string up to the ship tool's
 * limit (16,000 characters), the bound on what any writer of a card can hand in.
 */
export const DRAFT_TEXT_LIMIT = 16_000;

function capDraft(s: string): string {
  if (s.length <= DRAFT_TEXT_LIMIT) return s;
  // Never half a surrogate pair.
  return s.slice(0, DRAFT_TEXT_LIMIT).replace(/[\uD800-\uDBFF]$/, '');
}

/** The payload column and, when the API's copy differs (something was cut), the `payload_view` column. */
export function payloadColumns(payload: unknown): { payload: string; payload_view: string | null } {
  const whole = JSON.stringify(mapStrings(payload, capDraft));
  const view = JSON.stringify(capPayload(JSON.parse(whole)));
  return { payload: whole, payload_view: view === whole ? null : view };
}
