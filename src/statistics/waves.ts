/**
 * Pacing an experiment in waves (docs/decisions/experiments-pacing.md, "Pacing: a wave per look"): each wave mails what the
 * next look needs and no more, and the wave after starts only once that look was taken, so a look that decides
 * leaves the rest of the audience unmailed. Pure: the service counts and drafts, this says how many.
 */
import type { ExperimentPlan } from './plan.js';

/** The plan's figures a wave is sized from. */
type Sized = Pick<ExperimentPlan, 'plannedPerVariant' | 'minimumPerVariant' | 'lookEvery'>;

/**
 * Contacts per variant the next look reads: the plan's minimum before any look; after one, the last look's sample plus
 * at least `waveShare` of the planned sample, rounded up to the plan's look interval; never past the planned sample.
 * A look's fraction is exposures of the smallest variant over the planned sample, so the last look's sample is that
 * fraction of it.
 */
export function nextLookSample(plan: Sized, looks: readonly number[], waveShare: number): number {
  const planned = plan.plannedPerVariant;
  const last = looks.at(-1);
  if (last === undefined) return Math.min(planned, plan.minimumPerVariant);
  const lastSample = Math.round(last * planned);
  const step = Math.max(plan.lookEvery, Math.ceil(waveShare * planned));
  return Math.min(planned, Math.ceil((lastSample + step) / plan.lookEvery) * plan.lookEvery);
}

/** Contacts to draft now per variant: what each lacks of `target` among those mailed or on their way (`live`), at most `budget` in all. */
export function waveNeeds(target: number, live: readonly number[], budget: number): number[] {
  let left = Math.max(0, budget);
  return live.map((n) => {
    const need = Math.min(left, Math.max(0, target - n));
    left -= need;
    return need;
  });
}

/** The contacts the plan would mail at most (its planned sample in every variant) less those it mailed. */
export const sparedContacts = (plan: Pick<ExperimentPlan, 'plannedPerVariant' | 'variants'>, mailed: number): number =>
  Math.max(0, plan.plannedPerVariant * plan.variants.length - mailed);
