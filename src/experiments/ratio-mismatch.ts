/**
 * The sample ratio check's side in the service (docs/decisions/experiments-guarantee.md, "Sample ratio mismatch pauses
 * the experiment"): which counts it reads of an experiment, and the review card a mismatch files.
 */
import { newId } from '../ids.js';
import { cardShape } from '../review/file-work.service.js';
import type { RatioCheck } from '../statistics/ratio-check.js';
import type { Experiment, ExperimentCounts } from './experiment.js';
import { kindOf, thingWords } from './variants/registry.js';

/**
 * The counts the sample ratio check reads, per variant, or null where none applies, as the kind says (`ratio`): none
 * for an ad's impressions (the platform assigns them, not our hash); a send window's assignments not lost (its
 * exposures come window by window, so only what will never come says anything); any other's matured exposures.
 * Counts after the last resume (`ratioFrom`).
 */
export function ratioCounts(e: Experiment, c: ExperimentCounts): number[] | null {
  const raw = rawRatioCounts(e, c);
  if (!raw || raw.length !== e.plan.variants.length) return null;
  const from = e.draft.ratioFrom;
  return raw.map((n, i) => Math.max(0, n - (from?.[i] ?? 0)));
}

/** ratioCounts before the last resume is taken off (what a resume records as its `ratioFrom`). */
export function rawRatioCounts(e: Pick<Experiment, 'thing'>, c: ExperimentCounts): number[] | null {
  const ratio = kindOf(e.thing).ratio;
  if (ratio === null) return null;
  return ratio === 'kept' ? (c.assigned ?? []).map((n, i) => n - (c.lost?.[i] ?? 0)) : c.counts.map((v) => v.exposures);
}

/** The review card a ratio mismatch files: what went wrong with the counts, and what a person can do. */
export function mismatchCard(e: Experiment, check: RatioCheck, c: ExperimentCounts) {
  const keys = e.plan.variants.map((v) => v.key);
  const seen = check.observed.map(
    (n, i) => `${keys[i]} ${n.toLocaleString('en-US')} (expected about ${Math.round(check.expected[i]!).toLocaleString('en-US')})`,
  );
  const lost = (c.lost ?? []).map((n, i) => `${keys[i]} ${n}`).join(', ');
  const what = kindOf(e.thing).ratio === 'kept' ? 'contacts still in each variant' : 'contacts counted in each variant';
  const p = check.p < 1e-6 ? 'under one in a million' : `about ${check.p.toPrecision(1)}`;
  const summary =
    `The ${what} are not the even split the experiment was planned with: ${seen.join(', ')}; the chance of a split this ` +
    `uneven by luck is ${p}. Mail dismissed or left out per variant: ${lost || 'none'}.`;
  return {
    id: newId('card'),
    accountId: e.accountId,
    kind: 'approval',
    turnId: null,
    ...cardShape('approval', 'experiment_mismatch'),
    sourceType: 'experiment_mismatch',
    title: `Experiment paused: uneven split in ${thingWords(e.thing, e.draft)} for "${e.topic}"`.slice(0, 200),
    summary,
    prompt:
      `${summary} Something other than chance took contacts out of one variant (a reviewer dismissing one variant's mail, ` +
      'sends refused for one version, a window closed for one), so comparing the variants could name a false winner. ' +
      'The experiment is paused and declares nothing until you act: approve to resume it (the check then reads only what ' +
      'comes after), or dismiss to end it with no winner.',
    payload: {
      experimentId: e.id,
      thing: e.thing,
      topic: e.topic,
      observed: check.observed,
      expected: check.expected,
      p: check.p,
      // What a resume records as the check's new start: these counts, as the look read them.
      ratioAt: rawRatioCounts(e, c),
    },
  };
}
