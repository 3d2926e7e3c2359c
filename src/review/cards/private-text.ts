import type { Queryable } from '../../db.js';
import { isMailCard, mailDraftOf } from './card-shape.js';
import { memoryNotesRepository } from '../../memory/memory-notes.repository.js';

/**
 * The account's memory guides the agent; it is never quoted to outsiders. This file is the one check
 * for that, called where a draft becomes a card (the agent's tools) and where a card ships (send,
 * approve, the trust ladder). The rule (docs/decisions/review-and-shipping.md, "Private notes never ship"): text and notes
 * are compared as words (letters and digits, case-folded, NFKC; whitespace and punctuation ignored); a
 * draft quotes a note when it contains any QUOTE_WORDS consecutive words of it, or any shorter run of
 * its words at least QUOTE_CHARS characters long, or the whole note when the note has at least
 * WHOLE_NOTE_WORDS words. Shorter notes ("short emails") are ordinary language, not a quotation.
 */
export const QUOTE_WORDS = 8;
export const QUOTE_CHARS = 40;
export const WHOLE_NOTE_WORDS = 4;
/** Notes checked per account, newest first: bounded work per check (the brain itself sees the newest 50). */
export const NOTES_CHECKED = 500;

const wordsOf = (s: string): string[] =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? [];

/** The memory line a dismissal leaves; its format is defined here so the check can read it back. */
export function dismissalLesson(title: string, sourceType: string, reason?: string | null): string {
  const said = reason?.trim();
  return said
    ? `A person dismissed "${title}" (${sourceType}) and said: ${said}`
    : `A person dismissed "${title}" (${sourceType}) without giving a reason.`;
}

// Lazy title: a title that mimics the separator makes more of the note count as private, never less.
const LESSON = /^A person dismissed "[\s\S]*?" \([a-z0-9_]+\) (?:and said: ([\s\S]*)|without giving a reason\.)$/;

/**
 * The part of a note that is private. A dismissal lesson quotes the dismissed card's title, which is
 * the agent's own draft text meant for outsiders (a redraft may well reuse the subject); the person's
 * reason is theirs.
 */
function privatePart(note: string): string {
  const m = LESSON.exec(note);
  return m ? (m[1] ?? '') : note;
}

/** Each shortest run of a note's words that counts as a quotation, one per start; any longer quotation contains one. */
function quotableRuns(words: string[]): string[][] {
  const runs: string[][] = [];
  for (let i = 0; i < words.length; i++) {
    let chars = -1;
    for (let j = i; j < words.length && j < i + QUOTE_WORDS; j++) {
      chars += words[j]!.length + 1;
      if (j - i + 1 === QUOTE_WORDS || chars >= QUOTE_CHARS) {
        runs.push(words.slice(i, j + 1));
        break;
      }
    }
  }
  if (!runs.length && words.length >= WHOLE_NOTE_WORDS) runs.push(words);
  return runs;
}

/** The first run of a note's words that `texts` quote, as words joined by spaces; null when none. */
export function findQuotedNote(texts: string[], notes: string[]): string | null {
  // One word list for all texts, with an empty word between them, so no quotation spans two fields.
  const words: string[] = [];
  for (const t of texts) words.push(...wordsOf(t), '');
  const at = new Map<string, number[]>();
  words.forEach((w, i) => {
    if (!w) return;
    const list = at.get(w);
    if (list) list.push(i);
    else at.set(w, [i]);
  });
  for (const note of notes) {
    for (const run of quotableRuns(wordsOf(privatePart(note)))) {
      for (const start of at.get(run[0]!) ?? []) {
        if (run.every((w, k) => words[start + k] === w)) return run.join(' ');
      }
    }
  }
  return null;
}

const MAX_DEPTH = 20;

function stringsIn(v: unknown, out: string[], depth = 0): string[] {
  if (depth > MAX_DEPTH) return out;
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) stringsIn(x, out, depth + 1);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) stringsIn(x, out, depth + 1);
  return out;
}

/** What a card would put in front of outsiders: a mail card's subject and body; other work's payload text. */
export function outboundTexts(card: { sourceType: string; title: string; payload: Record<string, unknown> }): string[] {
  if (isMailCard(card)) {
    const draft = mailDraftOf(card);
    return [draft.subject, draft.body];
  }
  return stringsIn(card.payload, []);
}

/**
 * The check: whether outbound text quotes the account's private notes. Returns the sentence a caller
 * puts in its refusal ("… quotes the account's private notes (…)"), or null when it quotes none.
 */
export async function privateTextIn(q: Queryable, accountId: string, texts: string[]): Promise<string | null> {
  const outbound = texts.filter((t) => t.trim() !== '');
  if (!outbound.length) return null;
  const notes = await memoryNotesRepository(q).newest(accountId, NOTES_CHECKED);
  const quoted = findQuotedNote(outbound, notes);
  return quoted === null ? null : `quotes the account's private notes ("${quoted}"), which guide the work but are never shown to outsiders`;
}
