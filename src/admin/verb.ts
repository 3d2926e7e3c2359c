import type { Deps } from '../deps.js';
import { BadRequest } from '../errors.js';

// One admin CLI verb's shape (src/admin/commands.ts gathers them), and the flag reader the verbs share.

export type Flags = Record<string, string | undefined>;

export interface Verb {
  /** Flag names; a trailing `?` marks an optional one. */
  flags: string[];
  run(flags: Flags, deps: Pick<Deps, 'config' | 'db'>): Promise<Record<string, unknown>>;
}

/** A whole-number flag in [min, max], `fallback` when absent; one line naming the flag and the rule otherwise. */
export const int = (value: string | undefined, name: string, min: number, max: number, fallback: number): number => {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
    throw new BadRequest(`--${name} must be an integer from ${min} to ${max}`);
  return Number(value);
};
