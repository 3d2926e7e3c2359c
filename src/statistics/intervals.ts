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
