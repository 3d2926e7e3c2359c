import { headerFields, type ParsedMail } from './parse.js';
import type { BounceInfo, InboundKind } from './inbound.types.js';

/** What a message is before its reply kind is known: the kind, a bounce's verdict, the rule that decided. */
export interface KindVerdict {
  kind: InboundKind;
  bounce: BounceInfo | null;
  /** Which rule decided (kept in the inbound row's details). */
  rule: string;
  /** A reply's new text (quotes and signature stripped); the whole text for other kinds. */
  newText: string;
}

const DIAGNOSTIC_MAX = 500;

const phrases = (list: string[], flags = 'i') => new RegExp(`(?:${list.join('|')})`, flags);

/** Out-of-office subjects, several languages (a reply's "Re:" prefix allowed before them). */
const OOO_SUBJECT = new RegExp(
  `^(?:(?:re|aw|sv|vs|antw?|r)\\s*:\\s*)*${
    phrases([
      'out of (?:the )?office',
      'automatic reply',
      'auto(?:matic)?[- ]?(?:reply|response)',
      'autoreply',
      'away from (?:the |my )?office',
      'on vacation',
      'on leave',
      'abwesenheit(?:snotiz)?',
      'automatische antwort',
      'réponse automatique',
      'absence',
      'autosvar',
      'frånvaro',
      'fuera de la oficina',
      'respuesta automática',
      'risposta automatica',
      'fuori sede',
      'afwezig',
      'automatisch antwoord',
    ]).source
  }\\b`,
  'i',
);
/** Out-of-office sentences in a message's first lines. */
const OOO_BODY = phrases([
  "\\bi(?: am|'?m) (?:currently )?out of (?:the )?office",
  '\\b(?:with|have) limited access to (?:my )?e-?mail',
  '\\bi am (?:currently )?away (?:from|until)',
  '\\bthis is an automatic reply',
  '\\bich bin (?:derzeit |zur zeit )?(?:nicht im büro|abwesend)',
  '\\bje suis (?:actuellement )?absente?',
  '\\bjag är (?:ledig|inte på kontoret|frånvarande)',
]);

const MAILER_DAEMON = /^(mailer-daemon|postmaster|mail-daemon|mailerdaemon)@/i;
const STATUS_CODE = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/;

/** Unfolds `rfc822; jane@acme.test` (or `<jane@acme.test>`) to the bare lowercased address. */
function recipientOf(field: string | undefined): string | null {
  if (!field) return null;
  const v = field.includes(';') ? field.slice(field.indexOf(';') + 1) : field;
  const address = v.trim().replace(/^<|>$/g, '').trim().toLowerCase();
  return address.includes('@') ? address : null;
}

/** `smtp; 550 5.1.1 ...` → `550 5.1.1 ...`, one line, capped. */
function diagnosticOf(field: string | undefined): string | null {
  if (!field) return null;
  const v = field.includes(';') ? field.slice(field.indexOf(';') + 1) : field;
  return v.replace(/\s+/g, ' ').trim().slice(0, DIAGNOSTIC_MAX) || null;
}

/**
 * A delivery status notification's verdict (RFC 3464): the per-recipient blocks after the per-message
 * one; the first `failed` recipient wins, else the first `delayed`. Hard only when the action is
 * `failed` and the status is 5.x.x (a `failed` with no status counts as permanent); anything else is soft.
 * Null when every recipient was delivered, relayed or expanded (a success notice, not a bounce).
 */
export function readDeliveryStatus(report: string): BounceInfo | null {
  const blocks = report
    .split(/\r?\n[ \t]*\r?\n/)
    .map((b) => headerFields(b))
    .filter((f) => f.size > 0);
  const recipients = blocks.filter((f) => f.has('final-recipient') || f.has('original-recipient') || f.has('action'));
  const action = (f: Map<string, string[]>) => (f.get('action')?.[0] ?? '').toLowerCase().trim();
  const chosen = recipients.find((f) => action(f).startsWith('failed')) ?? recipients.find((f) => action(f).startsWith('delayed')) ?? null;
  if (!chosen) return recipients.length ? null : { type: 'soft', recipient: null, status: null, diagnostic: null };
  const diagnostic = diagnosticOf(chosen.get('diagnostic-code')?.[0]);
  const status = STATUS_CODE.exec(chosen.get('status')?.[0] ?? '')?.[0] ?? STATUS_CODE.exec(diagnostic ?? '')?.[0] ?? null;
  const failed = action(chosen).startsWith('failed');
  return {
    type: failed && (status === null || status.startsWith('5')) ? 'hard' : 'soft',
    recipient: recipientOf(chosen.get('original-recipient')?.[0]) ?? recipientOf(chosen.get('final-recipient')?.[0]),
    status,
    diagnostic,
  };
}

/**
 * A bounce that is no RFC 3464 report (qmail, some appliances): from MAILER-DAEMON or postmaster with an
 * enhanced status code in its text. 5.x.x is hard, 4.x.x soft; the recipient is X-Failed-Recipients or
 * the first `<address>` in the text.
 */
function nonStandardBounce(mail: ParsedMail): BounceInfo | null {
  if (!mail.from || !MAILER_DAEMON.test(mail.from)) return null;
  const text = mail.text.slice(0, 16_000);
  const code = STATUS_CODE.exec(text);
  if (!code || code[1] === '2') return null;
  const line = text.split(/\r?\n/).find((l) => l.includes(code[0])) ?? '';
  const failed = mail.headers['x-failed-recipients']?.split(',')[0];
  const inText = /<([^<>\s@]+@[^<>\s]+)>/.exec(text)?.[1];
  return {
    type: code[1] === '5' ? 'hard' : 'soft',
    recipient: (failed ?? inText)?.trim().toLowerCase() ?? null,
    status: code[0],
    diagnostic: line.replace(/\s+/g, ' ').trim().slice(0, DIAGNOSTIC_MAX) || null,
  };
}

/** RFC 3834 and the common vendor headers; the name of the rule that found an automatic reply, or null. */
function autoReplyRule(mail: ParsedMail): string | null {
  const h = mail.headers;
  const autoSubmitted = h['auto-submitted']?.toLowerCase().split(';')[0]?.trim();
  if (autoSubmitted && autoSubmitted !== 'no') return 'auto-submitted';
  if (h['x-autoreply'] !== undefined || h['x-autorespond'] !== undefined) return 'x-autoreply';
  const precedence = h.precedence?.toLowerCase().trim();
  if (precedence === 'auto_reply') return 'precedence-auto-reply';
  if (OOO_SUBJECT.test(mail.subject.trim()))
    return precedence && ['bulk', 'junk', 'list'].includes(precedence) ? 'precedence-ooo' : 'ooo-subject';
  return null;
}

/** Lines that start the quoted original in a reply: attribution lines, Outlook's header block, separators. */
const ATTRIBUTION = [
  /^On\b.{0,300}\bwrote:\s*$/i,
  /^Le\b.{0,300}\ba écrit\s*:\s*$/i,
  /^Am\b.{0,300}\bschrieb\b.{0,200}:\s*$/i,
  /^El\b.{0,300}\bescribió\s*:\s*$/i,
  /^Den\b.{0,300}\bskrev\b.{0,200}:\s*$/i,
  /^-{2,}\s*(?:Original Message|Ursprüngliche Nachricht|Message d'origine|Ursprungligt meddelande|Forwarded message)\s*-{2,}/i,
  /^_{10,}\s*$/,
];
const HEADER_BLOCK_FROM = /^\*?(?:From|Von|De|Från)\s*:\*?\s+\S/i;
const HEADER_BLOCK_NEXT = /^\*?(?:Sent|Date|Gesendet|Envoyé|Skickat|To)\s*:\*?\s/i;
const SIGN_OFF_LINE =
  /^(?:Sent from my (?:iPhone|iPad|Android|mobile)|Get Outlook for (?:iOS|Android)|Sent from Outlook|Von meinem iPhone gesendet)\b/i;

/**
 * A reply's new text: everything above the quoted original. Cuts at an attribution line ("On … wrote:",
 * also wrapped over two lines as Gmail does), an "-----Original Message-----" separator or Outlook's
 * "From: … Sent: …" block; drops `>` lines, a `-- ` signature and "Sent from my iPhone".
 */
export function newTextOf(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const kept: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    const joined = `${line} ${lines[i + 1]?.trim() ?? ''}`;
    if (ATTRIBUTION.some((r) => r.test(line))) break;
    if (/^On\b/i.test(line) && /\bwrote:\s*$/i.test(joined)) break;
    if (HEADER_BLOCK_FROM.test(line) && lines.slice(i + 1, i + 5).some((l) => HEADER_BLOCK_NEXT.test(l.trim()))) break;
    if (line === '--' || lines[i] === '-- ') break;
    if (line.startsWith('>') || SIGN_OFF_LINE.test(line)) continue;
    kept.push(lines[i]!.trimEnd());
  }
  return kept
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * What a received message is, by rules, in this order: a request to the `unsubscribe+` address; an RFC 3464
 * report (a success notice is an automatic message); an ARF complaint (RFC 5965); a non-standard bounce;
 * an automatic reply (RFC 3834 headers, X-Autoreply, Precedence, out-of-office subjects, then sentences);
 * else a human reply (its kind is decided on its new text by `classifyReply`). Mail sent only to a send's
 * envelope sender (`bounces+`) is never a human reply: people answer the From or Reply-To, while the
 * envelope sender gets notices, automatic responses (RFC 3834 §4) and challenge-response mail.
 */
export function classifyKind(mail: ParsedMail, toUnsubscribeAddress: boolean, toBounceAddressOnly = false): KindVerdict {
  const whole = { newText: mail.text, bounce: null };
  if (toUnsubscribeAddress) return { ...whole, kind: 'unsubscribe', rule: 'unsubscribe-address' };
  const dsn = mail.parts['message/delivery-status'] ?? mail.parts['message/global-delivery-status'];
  if (mail.reportType === 'delivery-status' || mail.reportType === 'global-delivery-status' || dsn) {
    const bounce = dsn ? readDeliveryStatus(dsn) : nonStandardBounce(mail);
    if (bounce) return { ...whole, kind: 'bounce', bounce, rule: dsn ? 'dsn-rfc3464' : 'report-without-status' };
    if (dsn) return { ...whole, kind: 'auto_reply', rule: 'dsn-success' };
  }
  if (mail.reportType === 'feedback-report' || mail.parts['message/feedback-report']) {
    const type = headerFields(mail.parts['message/feedback-report'] ?? '')
      .get('feedback-type')?.[0]
      ?.toLowerCase();
    if (type !== 'not-spam') return { ...whole, kind: 'complaint', rule: 'arf' };
    return { ...whole, kind: 'auto_reply', rule: 'arf-not-spam' };
  }
  const fallback = nonStandardBounce(mail);
  if (fallback) return { ...whole, kind: 'bounce', bounce: fallback, rule: 'mailer-daemon-status-code' };
  if (mail.from && MAILER_DAEMON.test(mail.from)) return { ...whole, kind: 'auto_reply', rule: 'mailer-daemon-notice' };
  const auto = autoReplyRule(mail);
  if (auto) return { ...whole, kind: 'auto_reply', rule: auto };
  const newText = newTextOf(mail.text);
  if (OOO_BODY.test(newText.slice(0, 1_000))) return { ...whole, kind: 'auto_reply', rule: 'ooo-body' };
  if (toBounceAddressOnly) return { ...whole, kind: 'auto_reply', rule: 'bounce-address' };
  return { kind: 'reply', bounce: null, rule: 'human', newText };
}
