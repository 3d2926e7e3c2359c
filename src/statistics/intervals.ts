/** A rate's 95% interval. The figures in words are in wording.ts. */
import { normalQuantile } from './normal.js';

const Z95 = normalQuantile(0.975);

/**
 * The 95% Wilson score interval of `outcomes` in `exposures` (Wilson 1927; recommended over the Wald interval
 * for small counts and rates near 0 by Brown, Cai & DasGupta, Statistical Science 2001). [0, 1] with no exposures.
 */
export function wilson(outcomes: number, exposures: number, z = Z95): [number, number] {
  if (exposures <= 0) return [0, 1];
  const p = outcomes / exposures;
  const z2n = (z * z) / exposures;
  const centre = (p + z2n / 2) / (1 + z2n);
  const half = (z / (1 + z2n)) * Math.sqrt((p * (1 - p)) / exposures + z2n / (4 * exposures));
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** A challenger's difference from the control: absolute (rate points) and relative (its rate over the control's, less 1). */
export interface Difference {
  /** The challenger's key. */
  key: string;
  absolute: { estimate: number; interval: [number, number] };
  /** Null while the control has no outcome (no ratio to take). */
  relative: { estimate: number; interval: [number, number] } | null;
  /** The intervals' coverage: 1 − the comparison's alpha (a repeated confidence interval's, at every look at once). */
  level: number;
}

/**
 * The difference of `b` from `a` with intervals at boundary `c` (a z-scale critical value): the unpooled normal
 * interval of p_b − p_a, and the delta-method interval of log(p_b / p_a) (each count with ½ added when one is 0 or
 * all). With `c` the group-sequential boundary of the look, this is Jennison & Turnbull's repeated confidence
 * interval (ch. 9): the intervals at every look cover the true difference together with probability 1 − α, so the
 * one at whatever look ends the experiment, by the rule or by a person, is valid then. `designEffect` widens both
 * for units that are not independent (ads' impressions clustered by person: Kish's 1 + (m − 1)ρ).
 */
export function differenceInterval(
  key: string,
  a: { exposures: number; outcomes: number },
  b: { exposures: number; outcomes: number },
  c: number,
  level: number,
  designEffect = 1,
): Difference {
  const pa = a.exposures > 0 ? a.outcomes / a.exposures : 0;
  const pb = b.exposures > 0 ? b.outcomes / b.exposures : 0;
  const inflate = Math.sqrt(Math.max(1, designEffect));
  const va = a.exposures > 0 ? (pa * (1 - pa)) / a.exposures : 0.25;
  const vb = b.exposures > 0 ? (pb * (1 - pb)) / b.exposures : 0.25;
  // With no outcome (or only outcomes) on a side the plug-in variance is 0; a quarter over n (the widest) stands in.
  const se = Math.sqrt((va > 0 ? va : 0.25 / Math.max(1, a.exposures)) + (vb > 0 ? vb : 0.25 / Math.max(1, b.exposures))) * inflate;
  const d = pb - pa;
  const absolute = { estimate: d, interval: [Math.max(-1, d - c * se), Math.min(1, d + c * se)] as [number, number] };
  if (a.exposures === 0 || b.exposures === 0 || a.outcomes === 0) return { key, absolute, relative: null, level };
  const half = (k: number, n: number) => (k === 0 || k === n ? 0.5 : 0);
  const ka = a.outcomes + half(a.outcomes, a.exposures);
  const kb = b.outcomes + half(b.outcomes, b.exposures);
  const na = a.exposures + 2 * half(a.outcomes, a.exposures);
  const nb = b.exposures + 2 * half(b.outcomes, b.exposures);
  const logRatio = Math.log(kb / nb / (ka / na));
  const seLog = Math.sqrt(1 / kb - 1 / nb + 1 / ka - 1 / na) * inflate;
  const relative = {
    estimate: pb / pa - 1,
    interval: [Math.exp(logRatio - c * seLog) - 1, Math.exp(logRatio + c * seLog) - 1] as [number, number],
  };
  return { key, absolute, relative, level };
}
