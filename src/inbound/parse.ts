import { MailParser, type AddressObject, type AttachmentStream, type HeaderValue, type MessageText } from 'mailparser';
import { AUTH_HEADER_SCAN, headerAuthOf, type HeaderAuth } from './sender-auth.js';

/** Parts of a report kept for classification and matching; every other attachment is drained unread. */
const KEPT_PARTS = [
  'message/delivery-status',
  'message/global-delivery-status',
  'message/feedback-report',
  'message/rfc822',
  'message/global',
  'text/rfc822-headers',
  'message/global-headers',
] as const;
type KeptPart = (typeof KEPT_PARTS)[number];

/** Bytes kept of one report part (a DSN's fields, an original's headers sit well inside this). */
const PART_MAX = 64 * 1024;
/** Characters of body text classification reads (the new text of a reply is at the top). */
export const TEXT_MAX = 64 * 1024;
/** HTML longer than this is not converted to text (mailparser's own bound on html-to-text work). */
const HTML_TO_TEXT_MAX = 1024 * 1024;
/** The raw body searched for an original's Message-ID or token when a bounce keeps no report part. */
const SCAN_MAX = 256 * 1024;

/** Headers whose plain values classification reads (lowercased names). */
const PLAIN_HEADERS = [
  'auto-submitted',
  'x-autoreply',
  'x-autorespond',
  'x-auto-response-suppress',
  'precedence',
  'x-failed-recipients',
  'x-ms-exchange-message-is-ndr',
  'list-unsubscribe',
  'delivered-to',
] as const;

/** What matching and classification need of one received message. */
export interface ParsedMail {
  /** Lowercased bare address of `From`. */
  from: string | null;
  /** Bare addresses of `To` and `Cc`, local part as written (a reply token is case-sensitive), domain lowercased. */
  to: string[];
  cc: string[];
  subject: string;
  /** With angle brackets. */
  messageId: string | null;
  inReplyTo: string[];
  references: string[];
  /** The text part, or the HTML part turned into text (mailparser's html-to-text) when there is none; cut to TEXT_MAX. */
  text: string;
  /** Selected headers, lowercased names, unfolded values. */
  headers: Partial<Record<(typeof PLAIN_HEADERS)[number], string>>;
  /** `multipart/report`'s `report-type`, lowercased. */
  reportType: string | null;
  contentType: string;
  /** Report parts by type, decoded text, each cut to PART_MAX. */
  parts: Partial<Record<KeptPart, string>>;
  /** The raw body (after the top header block) as latin1, cut to SCAN_MAX: a last place to find the original. */
  rawBody: string;
  /** The top header block's Authentication-Results fields, in order, and its number of From fields. */
  auth: HeaderAuth;
}

export type ParseResult = { ok: true; mail: ParsedMail } | { ok: false; reason: string };

const bracketed = (id: string): string => {
  const t = id.trim();
  return t.startsWith('<') ? t : `<${t}>`;
};

/** Message-IDs of a header value (`<a@b> <c@d>` or mailparser's array of them). */
function messageIds(v: HeaderValue | undefined): string[] {
  if (v === undefined) return [];
  const raw = Array.isArray(v) ? v.join(' ') : typeof v === 'string' ? v : '';
  const ids = raw.match(/<[^<>\s]+>/g);
  if (ids) return ids;
  return raw.split(/\s+/).filter(Boolean).map(bracketed);
}

/** The local part as written, the domain lowercased. */
const domainLowered = (a: string): string => {
  const at = a.lastIndexOf('@');
  return at < 0 ? a : a.slice(0, at) + a.slice(at).toLowerCase();
};

function addresses(v: AddressObject | AddressObject[] | undefined): string[] {
  if (!v) return [];
  const out: string[] = [];
  const walk = (list: { address?: string; group?: { address?: string }[] }[]) => {
    for (const a of list) {
      if (a.address) out.push(domainLowered(a.address.trim()));
      if (a.group) walk(a.group);
    }
  };
  for (const o of Array.isArray(v) ? v : [v]) walk(o.value);
  return out;
}

function plainHeader(v: HeaderValue | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v.replace(/\s+/g, ' ').trim();
  if (Array.isArray(v)) return v.map(String).join(', ');
  if (typeof v === 'object' && v && 'value' in v && typeof v.value === 'string') return v.value;
  if (typeof v === 'object' && v && 'text' in v && typeof v.text === 'string') return v.text;
  return undefined;
}

/**
 * The top-level MIME structure checks mailparser does not make (it reads anything): a multipart body
 * must use its boundary and close it; a message without one is cut short or broken, kept as `malformed`.
 */
function structureProblem(raw: Buffer, contentType: string, boundary: string | undefined, headerEnd: number): string | null {
  if (headerEnd < 0) return 'no header section (not an RFC 5322 message)';
  if (!contentType.startsWith('multipart/')) return null;
  if (!boundary) return `${contentType} without a boundary parameter`;
  const body = raw.subarray(headerEnd);
  const delimiter = Buffer.from(`--${boundary}`);
  const first = body.indexOf(delimiter);
  if (first < 0) return 'the multipart body never uses its declared boundary';
  if (body.indexOf(Buffer.from(`--${boundary}--`), first) < 0) return 'the message is cut short (its closing MIME boundary is missing)';
  return null;
}

/** Offset just past the blank line ending the top header block, or -1. */
function headerBlockEnd(raw: Buffer): number {
  const crlf = raw.indexOf('\r\n\r\n');
  const lf = raw.indexOf('\n\n');
  if (crlf >= 0 && (lf < 0 || crlf <= lf)) return crlf + 4;
  if (lf >= 0) return lf + 2;
  // A message of headers only is still a message.
  return /^[!-9;-~]+:/.test(raw.subarray(0, 200).toString('latin1')) ? raw.length : -1;
}

/** Reads a kept part up to PART_MAX; drains the rest unread so the parser goes on. */
function readPart(a: AttachmentStream, keep: boolean): Promise<string | null> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    a.content.on('data', (chunk: Buffer) => {
      if (!keep || size >= PART_MAX) return;
      chunks.push(chunk);
      size += chunk.length;
    });
    a.content.on('end', () => {
      a.release?.();
      resolve(keep ? Buffer.concat(chunks).subarray(0, PART_MAX).toString('utf8') : null);
    });
    a.content.on('error', () => {
      a.release?.();
      resolve(null);
    });
  });
}

interface Raw {
  headers: Map<string, HeaderValue>;
  text: MessageText | null;
  parts: Partial<Record<KeptPart, string>>;
}

function runParser(raw: Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const parser = new MailParser({
      keepDeliveryStatus: true,
      skipTextToHtml: true,
      skipImageLinks: true,
      skipTextLinks: true,
      maxHtmlLengthToParse: HTML_TO_TEXT_MAX,
    });
    const out: Raw = { headers: new Map(), text: null, parts: {} };
    const pending: Promise<void>[] = [];
    let settled = false;
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    parser.on('headers', (h) => {
      out.headers = h;
    });
    parser.on('data', (data: AttachmentStream | MessageText) => {
      if (data.type === 'text') {
        out.text = data;
        return;
      }
      const type = data.contentType.toLowerCase() as KeptPart;
      const keep = KEPT_PARTS.includes(type) && out.parts[type] === undefined;
      pending.push(
        readPart(data, keep).then((text) => {
          if (text !== null && out.parts[type] === undefined) out.parts[type] = text;
        }),
      );
    });
    parser.on('error', fail);
    parser.on('end', () => {
      void Promise.all(pending).then(() => {
        if (settled) return;
        settled = true;
        resolve(out);
      });
    });
    parser.end(raw);
  });
}

/**
 * Parses a stored message into what matching and classification read. Never throws for a client's
 * bad mail: anything mailparser cannot read, or a broken top-level MIME structure, is `{ ok: false, reason }`.
 * Work is bounded: attachments other than report parts are drained unread, report parts and text are capped.
 */
export async function parseMail(raw: Buffer): Promise<ParseResult> {
  const headerEnd = headerBlockEnd(raw);
  let r: Raw;
  try {
    r = await runParser(raw);
  } catch (err) {
    return { ok: false, reason: `unreadable MIME: ${String((err as Error).message ?? err).slice(0, 200)}` };
  }
  const h = r.headers;
  const ct = h.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  const contentType = (ct?.value ?? 'text/plain').toLowerCase();
  const problem = structureProblem(raw, contentType, ct?.params?.boundary, headerEnd);
  if (problem) return { ok: false, reason: problem };

  const headers: ParsedMail['headers'] = {};
  for (const key of PLAIN_HEADERS) {
    const v = plainHeader(h.get(key));
    if (v !== undefined) headers[key] = v;
  }
  // mailparser turns List-Unsubscribe into an object; the raw line is what matching reads.
  const lu = (r.headers.get('list') as { unsubscribe?: { url?: string; mail?: string } } | undefined)?.unsubscribe;
  if (lu && !headers['list-unsubscribe']) headers['list-unsubscribe'] = [lu.mail, lu.url].filter(Boolean).join(', ');

  const text = (r.text?.text ?? '').slice(0, TEXT_MAX);
  const messageId = plainHeader(h.get('message-id'));
  return {
    ok: true,
    mail: {
      from: addresses(h.get('from') as AddressObject | undefined)[0]?.toLowerCase() ?? null,
      to: addresses(h.get('to') as AddressObject | AddressObject[] | undefined),
      cc: addresses(h.get('cc') as AddressObject | AddressObject[] | undefined),
      subject: plainHeader(h.get('subject')) ?? '',
      messageId: messageId ? bracketed(messageId) : null,
      inReplyTo: messageIds(h.get('in-reply-to')),
      references: messageIds(h.get('references')),
      text,
      headers,
      reportType: contentType === 'multipart/report' ? (ct?.params?.['report-type']?.toLowerCase() ?? null) : null,
      contentType,
      parts: r.parts,
      rawBody: headerEnd < 0 ? '' : raw.subarray(headerEnd, headerEnd + SCAN_MAX).toString('latin1'),
      auth: headerAuthOf(raw.subarray(0, Math.min(Math.max(headerEnd, 0), AUTH_HEADER_SCAN)).toString('latin1')),
    },
  };
}

/** A header block (an original's headers in a DSN or ARF) as lowercased name → unfolded values. */
export function headerFields(block: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const end = block.search(/\r?\n\r?\n/);
  const head = (end < 0 ? block : block.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  for (const line of head.split(/\r?\n/)) {
    const m = /^([!-9;-~]+):\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    out.set(key, [...(out.get(key) ?? []), m[2]!.trim()]);
  }
  return out;
}
