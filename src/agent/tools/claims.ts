/**
 * Every proposal card that claims a result carries the numbers it rests on (docs/decisions/experiments.md, "A card
 * that claims a result carries its figures"). A card whose own words claim a result (won, beat, better, improved,
 * lifted, outperformed, "40% more" …) must carry its figures: `figures` with counts, or a citation with n/N counts.
 * The agent's create_card and ship refuse such a card without them; the experiment result cards carry both.
 */
import { ToolRefused } from '../core/brain.js';

const CLAIM_WORDS = [
  'won',
  'wins',
  'winner',
  'winning',
  'beat',
  'beats',
  'better',
  'improved',
  'improves',
  'improvement',
  'lifted',
  'lifts',
  'outperformed',
  'outperforms',
  'increased',
  'boosted',
  'doubled',
  'tripled',
];
const CLAIM = new RegExp(
  `\\b(?:${CLAIM_WORDS.join('|')})\\b|\\b\\d+(?:\\.\\d+)?\\s*(?:%|percent|x)\\s+(?:more|higher|better|fewer|lower|less|up)\\b`,
  'i',
);

/** A count against a total in words: "12/240", "12 / 240", "12 of 240". */
const N_OF_N = /\b\d[\d,]*\s*(?:\/|\bof\b)\s*\d[\d,]*\b/;

/** The words of `texts` that claim a result, or null. */
export function claimIn(texts: readonly string[]): string | null {
  for (const t of texts) {
    const m = CLAIM.exec(t);
    if (m) return m[0];
  }
  return null;
}

const isCount = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 0;

/** Whether the card carries figures: `figures` (each entry with a count) or a citation or text with n/N counts. */
export function carriesFigures(texts: readonly string[], payload: Record<string, unknown>): boolean {
  const figures = payload.figures;
  if (
    Array.isArray(figures) &&
    figures.length > 0 &&
    figures.every((f) => f !== null && typeof f === 'object' && Object.values(f as Record<string, unknown>).some(isCount))
  ) {
    return true;
  }
  const citation = typeof payload.citation === 'string' ? payload.citation : '';
  return [citation, ...texts].some((t) => N_OF_N.test(t));
}

/** The claim a card makes without the figures it rests on, or null when it claims nothing or carries them. */
export function unbackedClaim(texts: readonly string[], payload: Record<string, unknown>): string | null {
  const claim = claimIn(texts);
  return claim && !carriesFigures(texts, payload) ? claim : null;
}

/** Refuses (a failed tool result, nothing written) a card that claims a result without its figures. */
export function refuseUnbackedClaim(texts: readonly (string | undefined)[], payload: Record<string, unknown>): void {
  const claim = unbackedClaim(
    texts.filter((t): t is string => typeof t === 'string'),
    payload,
  );
  if (claim) {
    throw new ToolRefused(
      `the card claims a result ("${claim}") without the figures it rests on, so no card was made; ` +
        'add figures (counts per variant) or a citation with n/N counts, or say it without claiming a result',
    );
  }
}
